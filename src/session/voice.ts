/**
 * Whose words a user-role message holds. Only the person's are theirs: tern also gives the
 * model, as user messages, a compaction's summary (which a model wrote), a note on a branch set
 * aside (which quotes the model's last answer), a subagent's completion (a child model's answer),
 * a Stop hook's reason to go on (a hook's output) and the diagnostics of checks that ended late
 * (a checker's output, quoting the repository's files). Each is told by tern's own wording at
 * its start, which neither a model nor a repository writes: transcripts, resume and the live
 * view draw them as tern's lines, never as the person's.
 */
import { isSummaryMessage } from "../context/summary.ts";
import { visibleText } from "../core/terminal_text.ts";
import { branchSummaryMessage } from "./replay.ts";

/** Whose words a user-role message holds; `head` is tern's own first line of a completion. */
export type UserVoice =
  | { from: "person" }
  | { from: "summary" }
  | { from: "branch" }
  | { from: "subagent"; head: string }
  | { from: "hook" }
  | { from: "diagnostics" };

const BRANCH_NOTE = branchSummaryMessage("").content;
/** `completionText()`'s head (harness/subagents/mailbox.ts): task and ids, then a status. */
const SUBAGENT_HEAD =
  /^\[subagent [\s\S]*?, child session [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\) (?:completed|failed|cancelled|timed_out)\]/i;
/** `hookFrame()`'s first line (sandbox/hooks/run.ts): a Stop hook's reason to go on. */
const HOOK_FRAME =
  /^--- BEGIN [A-Z ]+ [0-9a-f]{8} \(a hook's output: context, not the person's words\) ---\n/;
/** A late check's note (harness/diagnostics/edit_diagnostics.ts), as `takeLate()` gives it. */
const LATE_DIAGNOSTICS = /^Diagnostics \([^\n]*\)/;
/** What ends a late check's note (`EditDiagnostics` adds it): how it is told apart. */
export const LATE_DIAGNOSTICS_END = "\n(from a check that ended after its change's result)";

/** Whose words the user-role message `content` holds (see {@linkcode UserVoice}). */
export function userVoice(content: string): UserVoice {
  if (isSummaryMessage({ role: "user", content })) return { from: "summary" };
  if (content.startsWith(BRANCH_NOTE)) return { from: "branch" };
  if (content.startsWith("--- BEGIN ") && HOOK_FRAME.test(content)) return { from: "hook" };
  if (LATE_DIAGNOSTICS.test(content) && content.endsWith(LATE_DIAGNOSTICS_END)) {
    return { from: "diagnostics" };
  }
  const head = content.startsWith("[subagent ") ? SUBAGENT_HEAD.exec(content) : null;
  return head ? { from: "subagent", head: head[0] } : { from: "person" };
}

/** tern's one line for a user-role message that is not the person's: what it was, who reads it. */
export function voiceLine(voice: Exclude<UserVoice, { from: "person" }>): string {
  switch (voice.from) {
    case "summary":
      return "⇣ earlier messages compacted: the model reads a summary of them";
    case "branch":
      return "• work on another branch was set aside: the model reads tern's note on it";
    case "subagent":
      return `• ${visibleText(voice.head)}: its answer went to the model`;
    case "hook":
      return "• a Stop hook said the work is not finished: its reason went to the model";
    case "diagnostics":
      return "• checks that ended late found problems: their diagnostics went to the model";
  }
}
