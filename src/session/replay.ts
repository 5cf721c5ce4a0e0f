/**
 * Replay: the state a session is in at one entry, rebuilt from the path root → entry. The
 * context the model sees honours compactions (summary + what they kept) and branch summaries;
 * settings (model, thinking level, mode, profile) are the last ones set on the path; permission
 * changes accumulate in order. Entries of unknown type are skipped.
 */
import { addUsage, emptyUsage, type Message, type Usage } from "../core/messages.ts";
import type { ContextItem } from "../context/compaction_types.ts";
import { summaryMessage } from "../context/summary.ts";
import { closeDanglingCalls } from "./dangling.ts";
import type { PermissionChange, SessionEntry } from "./types.ts";

export interface ReplayState {
  /**
   * The conversation for the model (without the system prompt), each item tied to its entry.
   * Always well formed: a tool call that has no result (tern was killed while it ran) is closed
   * with an "interrupted" observation (dangling.ts).
   */
  items: ContextItem[];
  model?: string;
  provider?: string;
  thinking?: string;
  mode?: string;
  profile?: string;
  /** Session-wide approvals and grants, in the order they were given. */
  permissions: PermissionChange[];
  /** Model usage summed over the path (including what compactions summarised away). */
  usage: Usage;
  /** Cost in USD summed over the path's priced calls; absent when none had a price. */
  cost?: number;
  /** Fallback switches on the path, in order (`provider/model`). */
  fallbacks: string[];
  /** Compactions on the path. */
  compactions: number;
}

/** Rebuilds the state at the end of `path` (entries root → leaf, as `SessionTree.path` gives). */
export function replay(path: readonly SessionEntry[]): ReplayState {
  const state: ReplayState = {
    items: [],
    permissions: [],
    usage: emptyUsage(),
    compactions: 0,
    fallbacks: [],
  };
  for (const entry of path) {
    switch (entry.type) {
      case "message":
        state.items.push({ id: entry.id, message: entry.message });
        if (entry.usage) state.usage = addUsage(state.usage, entry.usage);
        if (entry.cost !== undefined) state.cost = (state.cost ?? 0) + entry.cost;
        break;
      case "model":
        if (entry.cause === "fallback") {
          state.fallbacks.push(`${entry.provider ?? "?"}/${entry.model}`);
          break;
        }
        state.model = entry.model;
        state.provider = entry.provider;
        break;
      case "thinking":
        state.thinking = entry.level;
        break;
      case "mode":
        state.mode = entry.mode;
        break;
      case "profile":
        state.profile = entry.profile;
        break;
      case "permission":
        state.permissions.push(entry.change);
        break;
      case "compaction": {
        const kept = entry.firstKeptId === null
          ? -1
          : state.items.findIndex((item) => item.id === entry.firstKeptId);
        const rest = kept === -1 ? [] : state.items.slice(kept);
        state.items = [{ id: entry.id, message: summaryMessage(entry.summary) }, ...rest];
        state.compactions++;
        break;
      }
      case "branch":
        if (entry.summary) {
          state.items.push({ id: entry.id, message: branchSummaryMessage(entry.summary) });
        }
        break;
      default:
        // Labels, plan and subagent links, and types from newer versions: not context.
        break;
    }
  }
  state.items = closeDanglingCalls(state.items);
  return state;
}

/** How a summary of an abandoned branch reads to the model. */
export function branchSummaryMessage(summary: string): Message {
  return {
    role: "user",
    content: "[Note from tern] Earlier work on another branch of this session was set aside. " +
      `What was done there:\n\n${summary}`,
  };
}
