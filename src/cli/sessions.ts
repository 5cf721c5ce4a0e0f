/**
 * `tern sessions list|show|tree|fork|export|compact|rewind`: inspect and manage session files.
 */
import { visibleText } from "../core/terminal_text.ts";
import { loadConfig } from "../config/mod.ts";
import { compactionSettings, compactSession } from "../agent/session_turn.ts";
import { addUsage, emptyUsage } from "../core/messages.ts";
import { forkSession } from "../session/fork.ts";
import { loadSession } from "../session/load.ts";
import {
  findSession,
  isOwnSessionFile,
  latestSession,
  listSessionFiles,
} from "../session/paths.ts";
import { replay } from "../session/replay.ts";
import { keyMasker, SecretMasker } from "../sandbox/secrets.ts";
import { COPY, copyJson } from "../core/json_depth.ts";
import { SessionTree } from "../session/tree.ts";
import { summarisedCount } from "../session/types.ts";
import { InputError } from "./errors.ts";
import { VERSION } from "../version.ts";
import type { CommandLine } from "./args.ts";
import { connectModels } from "../harness/models.ts";
import { processWriters, resolveWorkspace } from "./process_env.ts";
import type { RunFlags } from "./run.ts";
import {
  applySessionSettings,
  checkSessionServer,
  openSessionHere,
} from "../harness/run_session.ts";
import { terminalWriters } from "./process_env.ts";
import { describeEntry, shownId, transcriptMarkdown } from "./session_text.ts";
import { warningLine } from "../core/warnings.ts";
import { formatCost } from "../llm/model_info.ts";

type SessionsLine = Extract<CommandLine, { command: "sessions" }>;

/** Runs one `tern sessions` action and returns its exit code. */
export async function runSessionsCommand(line: SessionsLine, flags: RunFlags): Promise<number> {
  const workspace = resolveWorkspace(flags.cwd);
  const loaded = await loadConfig({ cwd: workspace, flags: flags.config });
  const { ternHome } = loaded.config;
  // Sessions hold what the model and tools wrote: text output is made safe for a terminal.
  const writers = terminalWriters(processWriters(), { json: line.json });
  const { err } = writers;
  // And masked, for the keys tern holds now and the key formats (JSON string by string): a
  // session keeps a key a tool printed unmasked when tern did not hold that key then.
  const masker = keyMasker(loaded.config);
  const out = (text: string) => writers.out(line.json ? text : masker.mask(text));
  if (line.action === "list") {
    const { sessions, unreadable } = await listSessionFiles(
      ternHome,
      line.all ? {} : { cwd: workspace },
    );
    // A file named like a session that cannot be read is said, not left out without a word.
    if (!line.json) {
      for (const file of unreadable) err(`tern: warning: ${warningLine(file.reason)}\n`);
    }
    if (line.json) {
      const titles = sessions.map((s) =>
        s.firstUserText === undefined ? s : { ...s, firstUserText: masker.mask(s.firstUserText) }
      );
      out(JSON.stringify(titles) + "\n");
    } else if (sessions.length === 0) {
      err(`tern: no sessions${line.all ? "" : ` in "${workspace}"`} yet\n`);
    } else {
      for (const s of sessions) {
        const where = line.all ? `  ${visibleText(s.cwd)}` : "";
        const when = s.modified.toISOString().slice(0, 16).replace("T", " ");
        out(
          `${shownId(s.id.slice(0, 8))}  ${when}  ` +
            `${String(s.entries).padStart(5)} entries  ${s.firstUserText ?? "(no request)"}` +
            `${where}\n`,
        );
      }
    }
    return 0;
  }
  const path = line.session === undefined
    ? await newestSession(ternHome, workspace)
    : await findSession(ternHome, line.session, workspace);
  switch (line.action) {
    case "show":
      out(await showSession(path, line.json, masker));
      return 0;
    case "tree":
      out(await treeText(path, ternHome));
      return 0;
    case "export": {
      const session = await loadSession(path);
      const tree = new SessionTree(session.entries);
      if (line.json) {
        const entries = session.entries.map((entry) => maskedJson(entry, masker));
        out(JSON.stringify({ header: session.header, leafId: tree.leafId, entries }));
        out("\n");
      } else {
        out(transcriptMarkdown(session.header, replay(tree.path())));
      }
      return 0;
    }
    case "fork": {
      // A file tern did not write gives only its conversation, in this workspace (fork.ts).
      const imported = !isOwnSessionFile(ternHome, path);
      const fork = await forkSession(ternHome, path, {
        entryId: line.entry,
        ternVersion: VERSION,
        workspace,
      });
      fork.close();
      out(
        line.json
          ? JSON.stringify({ id: fork.id, path: fork.path, ...(imported ? { imported } : {}) }) +
            "\n"
          : `${fork.id}\n`,
      );
      if (!line.json) {
        if (imported) {
          err(
            `tern: "${path}" is not one of tern's sessions: imported its conversation only ` +
              "(no model, mode, profile, approvals, grants, pins, plans or subagent runs) " +
              `into "${workspace}"\n`,
          );
        }
        err(`tern: forked into ${fork.path}; continue it with tern run -r ${fork.id}\n`);
      }
      return 0;
    }
    case "rewind": {
      const { rewindCommand } = await import("./sessions_rewind.ts");
      return await rewindCommand(path, line, { ...loaded.config, out, err });
    }
    case "compact": {
      // Compacting continues the session, as `tern run -c` does: only this directory's, and
      // never with a server a project's file chose when the conversation went to another.
      const session = await openSessionHere(path, workspace, ternHome);
      try {
        const state = session.state();
        checkSessionServer(
          { header: session.header, hasHistory: state.items.length > 0 },
          loaded.config.serverChosenBy,
        );
        const { setup, config } = await connectModels(
          applySessionSettings(loaded.config, loaded.sources, state),
          loaded.sources,
          state,
        );
        const keys = keyMasker(config);
        const entry = await compactSession(session, {
          provider: setup.router,
          model: config.model,
          settings: compactionSettings(config.contextWindow, config.compactAt),
          mask: (text) => keys.mask(text),
          focus: line.focus,
        });
        if (!entry) {
          err("tern: nothing to compact: the whole conversation is recent enough to keep\n");
          return 0;
        }
        const how = entry.fallback ? "fallback summary (the summary call failed)" : "summary";
        out(
          line.json ? JSON.stringify(entry) + "\n" : `compacted ${summarisedCount(entry)} ` +
            `entries: ${entry.tokensBefore} → ${entry.tokensAfter} tokens (${how})\n`,
        );
        return 0;
      } finally {
        session.close();
      }
    }
  }
}

async function showSession(path: string, json: boolean, masker: SecretMasker): Promise<string> {
  const session = await loadSession(path);
  const tree = new SessionTree(session.entries);
  const state = replay(tree.path());
  // Every call the session paid for, on any branch.
  let usage = emptyUsage();
  let cost: number | undefined;
  for (const entry of session.entries) {
    if (entry.type !== "message") continue;
    if (entry.usage) usage = addUsage(usage, entry.usage);
    if (entry.cost !== undefined) cost = (cost ?? 0) + entry.cost;
  }
  const counts: Record<string, number> = {};
  for (const entry of session.entries) counts[entry.type] = (counts[entry.type] ?? 0) + 1;
  if (json) {
    const { items: _items, ...settings } = state;
    return JSON.stringify(maskedJson({
      header: session.header,
      path,
      leafId: tree.leafId,
      counts,
      usage,
      cost,
      state: settings,
      warnings: [...session.warnings, ...tree.warnings],
    }, masker)) + "\n";
  }
  const { header } = session;
  // The header is what the file says (`tern sessions show ./shared.jsonl`): each field is a fact
  // on its one row, made visible, so none can draw rows of its own.
  const parent = header.parent;
  const lines = [
    `session   ${shownId(header.id)}`,
    `file      ${visibleText(path)}`,
    `cwd       ${visibleText(String(header.cwd))}`,
    `created   ${visibleText(String(header.created))} (tern ${
      visibleText(String(header.ternVersion))
    }, format ${visibleText(String(header.version))})`,
    ...(parent
      ? [
        `forked    from ${shownId(parent.id)} at ${
          parent.leafId === null ? "(start)" : shownId(parent.leafId)
        }`,
      ]
      : []),
    `entries   ${session.entries.length} (${
      Object.entries(counts).map(([t, n]) => `${n} ${t}`).join(", ")
    })`,
    `leaf      ${tree.leafId === null ? "(empty)" : shownId(tree.leafId)}`,
    // What the session file recorded (it may be an imported one): each on its one row.
    `model     ${shown(state.model)}${state.provider ? ` (${visibleText(state.provider)})` : ""}` +
    `    thinking ${shown(state.thinking)}`,
    ...(state.fallbacks.length > 0
      ? [`fallback  switched to ${state.fallbacks.map((f) => visibleText(f)).join(", then ")}`]
      : []),
    `mode      ${shown(state.mode)}    profile ${shown(state.profile)}`,
    `grants    ${state.permissions.length} for the session`,
    `usage     ${usage.inputTokens} input, ${usage.outputTokens} output, ` +
    `${usage.cachedTokens} cached, ${usage.reasoningTokens} reasoning tokens`,
    `cost      ${cost === undefined ? "unknown (no prices for these models)" : formatCost(cost)}`,
    `compacted ${state.compactions} time(s) on the current path`,
    ...[...session.warnings, ...tree.warnings].map((w) => `warning   ${warningLine(w)}`),
    "",
    transcriptMarkdown(header, state),
  ];
  return lines.join("\n");
}

/**
 * `value` (an entry, what `show --json` prints) with every string in it masked but the opaque
 * ones: a reasoning part's `signature` and `data` and an image's `data`, which the API takes back
 * only as they were sent. Reasoning its API signed is the one text the session keeps unmasked by
 * design; any other may hold a key tern did not hold when it was written.
 */
function maskedJson<T>(value: T, masker: SecretMasker): T {
  return copyJson(value, (item, { key }) => {
    if (typeof item !== "string" || key === "signature" || key === "data") return COPY;
    return masker.mask(item);
  }) as T;
}

/** A recorded setting on one row, made visible; "(not recorded)" when there is none. */
function shown(value: string | undefined): string {
  return value === undefined ? "(not recorded)" : visibleText(value);
}

async function treeText(path: string, ternHome: string): Promise<string> {
  const session = await loadSession(path);
  const tree = new SessionTree(session.entries);
  const onPath = new Set(tree.path().map((entry) => entry.id));
  const lines: string[] = [];
  // Depth-first with an explicit stack: a long session is deep, recursion would overflow.
  const stack = [...tree.roots].reverse().map((entry) => ({ entry, depth: 0 }));
  while (stack.length > 0) {
    const { entry, depth } = stack.pop()!;
    const children = tree.children(entry.id);
    const label = tree.labels.get(entry.id);
    const marks = [
      entry.id === tree.leafId ? " ← leaf" : "",
      label ? ` [${visibleText(label)}]` : "",
    ].join("");
    const bullet = onPath.has(entry.id) ? "*" : "-";
    lines.push(`${indent(depth)}${bullet} ${shownId(entry.id)} ${describeEntry(entry)}${marks}`);
    // A single child continues at the same depth, so a linear conversation stays flat.
    const next = children.length > 1 ? depth + 1 : depth;
    for (const child of [...children].reverse()) stack.push({ entry: child, depth: next });
  }
  const { childSessionLines } = await import("./session_children.ts");
  lines.push(...await childSessionLines(ternHome, session.header.id, session.entries));
  return lines.join("\n") + "\n";
}

/** How many levels of a tree are shown by indentation; deeper ones say their depth. */
const MAX_INDENT = 32;

/**
 * The indentation of a tree row at `depth`: two spaces a level, up to {@linkcode MAX_INDENT}
 * levels, then the depth in figures. Each branch point is a level, and a file of thousands of
 * them (each entry with a side entry) would otherwise print rows whose indentation grows with
 * the file: gigabytes from a file of megabytes, past what one string can hold.
 */
function indent(depth: number): string {
  if (depth <= MAX_INDENT) return "  ".repeat(depth);
  return `${"  ".repeat(MAX_INDENT)}(depth ${depth}) `;
}

/** The newest session of `workspace` (`-c`). */
async function newestSession(ternHome: string, workspace: string): Promise<string> {
  const path = await latestSession(ternHome, workspace);
  if (path === undefined) {
    throw new InputError(`There is no session in "${workspace}" yet: start one with tern run`);
  }
  return path;
}
