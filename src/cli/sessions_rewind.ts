/**
 * `tern sessions rewind <session> <entry|undo>`: shows what going back to before a user message
 * restores (the diff, the conflicts), and with `--yes` does it. Ctrl-C (SIGINT), SIGTERM and
 * SIGHUP while it restores files wait for the restore to end; a rewind stopped partway anyway
 * (SIGKILL) is told here, with the commands that finish it or undo it.
 */
import { loadConfig } from "../config/mod.ts";
import type { PermissionRule } from "../config/schema.ts";
import { guardHostPrograms } from "../core/host_programs.ts";
import {
  applyRewind,
  planRewind,
  type RewindPlan,
  type RewindScope,
} from "../harness/rewind/rewind.ts";
import { interruptedRewindNotice } from "../harness/rewind/interrupted.ts";
import { warningLine } from "../core/warnings.ts";
import { Session } from "../session/session.ts";
import { checkOwnSessionFile, sessionFolder } from "../session/paths.ts";
import { dirname, resolve } from "../core/path.ts";
import type { CommandLine } from "./args.ts";
import { InputError } from "./errors.ts";
import { patchLines } from "../tui/diff_view.ts";
import { type KeyConfig, keyMasker, type SecretMasker } from "../sandbox/secrets.ts";
import { COPY, copyJson } from "../core/json_depth.ts";

type SessionsLine = Extract<CommandLine, { command: "sessions" }>;

/**
 * Runs `tern sessions rewind` on the session file at `path`; returns the exit code. What the deny
 * rules of `context` (the config loaded here) and of the session's workspace hide is left alone.
 * JSON written to `out` has the keys of `context` masked in each string (a patch holds files'
 * content); text is the caller's to mask.
 */
export async function rewindCommand(
  path: string,
  line: SessionsLine,
  context: {
    ternHome: string;
    rewindMaxFileBytes: number;
    rewindMaxFiles: number;
    rules: readonly PermissionRule[];
    out: (text: string) => void;
    err: (text: string) => void;
  } & KeyConfig,
): Promise<number> {
  const { out, err } = context;
  const masker = keyMasker(context);
  const json = (value: unknown) => `${JSON.stringify(maskedJson(value, masker))}\n`;
  const options = line.rewind ?? { yes: false };
  checkOwnSessionFile(context.ternHome, path);
  const session = await Session.open(path);
  try {
    checkSessionFolder(session, context.ternHome);
    // The session's folder, not the current one: no program started on the host comes from it.
    guardHostPrograms([session.header.cwd]);
    const scope = (options.restore ?? "both") as RewindScope;
    if (scope !== "conversation") checkWorkspaceThere(session);
    // Run from another folder, the session's workspace's own rules hold too (for its files).
    const there = scope === "conversation"
      ? []
      : (await loadConfig({ cwd: session.header.cwd })).config.rules;
    const rewind = {
      workspace: session.header.cwd,
      scope,
      maxFileBytes: context.rewindMaxFileBytes || undefined,
      maxFiles: context.rewindMaxFiles,
      rules: [...context.rules, ...there],
    };
    const interrupted = await interruptedRewindNotice(session.path, session.id);
    if (interrupted !== undefined) err(`tern: warning: ${warningLine(interrupted)}\n`);
    const plan = await planRewind(session, line.entry!, rewind);
    if (!line.json) out(describePlan(plan));
    if (!options.yes) {
      if (line.json) out(json(planJson(plan)));
      err("tern: nothing changed yet; run again with --yes to apply\n");
      return 0;
    }
    if (plan.conflicts.length > 0 && options.conflicts === undefined) {
      throw new InputError(
        `Cannot rewind: ${plan.conflicts.length} file(s) changed outside tern since then ` +
          `(${plan.conflicts.map((p) => JSON.stringify(p)).join(", ")}): give --conflicts keep ` +
          "to leave them as they are, or --conflicts overwrite to restore them too",
      );
    }
    const result = await finishingFirst(err, () =>
      applyRewind(session, plan, {
        ...rewind,
        overwrite: options.conflicts === "overwrite",
      }));
    if (line.json) {
      out(json({ ...planJson(plan), ...result }));
    } else {
      const undone = plan.target === "undo";
      out(
        `${undone ? "undone" : "rewound"}: ${result.written.length} file(s) written, ` +
          `${result.deleted.length} removed` +
          (result.kept.length > 0 ? `, ${result.kept.length} kept as they were` : "") +
          (result.leaf === undefined
            ? ""
            : undone
            ? "; the conversation is back where it was before the rewind"
            : "; the conversation continues from before that message") +
          "\n",
      );
      // An undo is a rewind too: undoing it again puts the rewind back.
      err(
        `tern: ${undone ? "redo the rewind" : "undo it"} with ` +
          `\`tern sessions rewind ${session.id} undo --yes\`\n`,
      );
    }
    return 0;
  } finally {
    session.close();
  }
}

/**
 * Runs `work` with SIGINT, SIGTERM and SIGHUP held until it ends: a restore stopped partway
 * leaves the files half restored. The first such signal is told on `err`; the command then ends
 * as it would have.
 */
async function finishingFirst<T>(err: (text: string) => void, work: () => Promise<T>): Promise<T> {
  let told = false;
  const hold = () => {
    if (told) return;
    told = true;
    err(
      "tern: finishing the rewind first: stopping it partway would leave the files half restored\n",
    );
  };
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const signal of signals) Deno.addSignalListener(signal, hold);
  try {
    return await work();
  } finally {
    for (const signal of signals) Deno.removeSignalListener(signal, hold);
  }
}

/** The plan as text: what moves, the diff, the conflicts. */
export function describePlan(plan: RewindPlan): string {
  const lines: string[] = [];
  if (plan.leaf !== undefined) {
    lines.push(
      plan.target === "undo"
        ? "conversation: back to where it was before the rewind"
        : "conversation: continues from before that message (a new branch)",
    );
  }
  if (plan.scope !== "conversation") {
    lines.push(
      plan.changes.length === 0
        ? "files: nothing to restore"
        : `files: ${plan.changes.length} to restore`,
    );
  }
  for (const path of plan.conflicts) {
    lines.push(`conflict: ${JSON.stringify(path)} was changed outside tern since then`);
  }
  for (const path of plan.unsaved) {
    lines.push(`warning: ${JSON.stringify(path)} is over the size limit: its content now is lost`);
  }
  for (const path of plan.skipped) {
    lines.push(`skipped: ${JSON.stringify(path)} was over the size limit then: left as it is`);
  }
  for (const path of plan.unheld) {
    lines.push(
      `left: ${JSON.stringify(path)} is ${
        plan.current?.unstorable?.includes(path)
          ? "named as git cannot store"
          : "over the size limit"
      }: no checkpoint holds it, left as it is`,
    );
  }
  for (const path of plan.ignored) {
    lines.push(
      `kept: ${JSON.stringify(path)} is ignored by the checkpoint's .gitignore: left as it is`,
    );
  }
  // Each line of the patch made visible on its own: a carriage return in a file's content
  // would otherwise become a line break on the way to the terminal, and the lines after it
  // would read as hunks, even files, of their own.
  const patch = patchLines(plan.patch).join("\n");
  return `${lines.join("\n")}\n${patch === "" ? "" : `\n${patch}\n`}`;
}

/** `value` with each of its strings masked (keys are paths tern chose, strings are content). */
function maskedJson(value: unknown, masker: SecretMasker): unknown {
  return copyJson(value, (item) => typeof item === "string" ? masker.mask(item) : COPY);
}

function planJson(plan: RewindPlan) {
  return {
    target: plan.target,
    scope: plan.scope,
    leaf: plan.leaf,
    changes: plan.changes.map(({ path, status }) => ({ path, status })),
    conflicts: plan.conflicts,
    unsaved: plan.unsaved,
    skipped: plan.skipped,
    ignored: plan.ignored,
    unheld: plan.unheld,
    patch: plan.patch,
  };
}

/**
 * Refuses a session whose header names a workspace other than the one whose folder of tern's
 * home holds it: the header was edited (or the file moved), and the rewind would restore that
 * session's files into whatever folder the header names.
 * @throws {InputError} naming both.
 */
function checkSessionFolder(session: Session, ternHome: string): void {
  const expected = sessionFolder(ternHome, session.header.cwd);
  const real = (path: string) => {
    try {
      return Deno.realPathSync(path);
    } catch {
      return undefined;
    }
  };
  const actual = real(dirname(resolve(session.path)));
  if (actual !== undefined && actual === real(expected)) return;
  throw new InputError(
    `Cannot rewind "${session.path}": its header names the workspace "${session.header.cwd}", ` +
      `whose sessions are in "${expected}", not where the file is; tern rewinds a session ` +
      "only from its own workspace's folder of sessions",
  );
}

/**
 * Refuses to rewind the files of a session whose workspace is no folder any more (moved or
 * removed): git would fail on it without saying why.
 * @throws {InputError} naming the folder and what can be done.
 */
function checkWorkspaceThere(session: Session): void {
  const workspace = session.header.cwd;
  let folder = false;
  try {
    folder = Deno.statSync(workspace).isDirectory;
  } catch {
    // Not there (or not readable): said below.
  }
  if (folder) return;
  throw new InputError(
    `Cannot rewind the files of session "${session.id}": its workspace ` +
      `${JSON.stringify(workspace)} is not a folder any more (moved or removed): put it back ` +
      "there, or give --restore conversation to rewind only the conversation",
  );
}
