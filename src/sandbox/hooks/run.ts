/**
 * Runs lifecycle hooks the way Claude Code does, inside tern's shell sandbox: each matching
 * command gets the event as JSON on stdin; exit code 2 blocks (its stderr is the reason), exit
 * 0 may print JSON that decides (`decision`, `hookSpecificOutput.permissionDecision`), rewrites
 * the tool input (`updatedInput`) or adds context (`additionalContext`); any other exit, a
 * timeout or JSON that cannot be read is a non-blocking error, noted. Every run is audited.
 *
 * The shell runner gives a command no stdin and mixes its stdout and stderr, so each hook runs
 * inside a small wrapper (see `wrapper.ts`): the JSON comes in the script, compressed once it
 * is large, the hook's stdout and stderr come back through pipes (never a file a full `/tmp`
 * could cut off), and the wrapper prints them between random markers, with the exit code. A
 * trusted project hook runs in a one-shot sandbox with checked copies of its pinned files bound
 * over them (see `frozen_pins.ts`).
 *
 * A PreToolUse hook that could not run at all or not to its end (its sandbox did not start, its
 * program was not found or not executable, its input was too large to pass, its output too
 * large to read whole, its pinned files changed since trust or moved while it ran, tern's
 * wrapper around it failed, it timed out) asks instead of passing: the call becomes a question
 * only a person may answer (denied where none can be asked), and the person is told why.
 * Otherwise a guard would guard nothing whenever the model made it fail to start, or hang, with
 * a large input, a changed script or a FIFO where it reads. A hook that ran and failed or
 * printed nonsense keeps Claude Code's meaning: no opinion, noted; so does any other event's
 * hook that timed out.
 */
import type { AuditRecord } from "../audit.ts";
import type { ShellRunner } from "../types.ts";
import { dirname, join } from "../../core/path.ts";
import { pinChanges } from "../../mcp/_pinned_files.ts";
import { claudeToolName, type HookCommand, type HookEvent, hookPins, matches } from "./config.ts";
import { HOOK_SCRIPTS_FOLDER } from "./scripts_folder.ts";
import { freezePins } from "./frozen_pins.ts";
import { hookScript, unwrap } from "./wrapper.ts";
import { visibleText } from "../../core/terminal_text.ts";
import { type Answer, interpret, isObject, shownCommand } from "./answer.ts";

export { MAX_HOOK_TEXT_CHARS, shownCommand } from "./answer.ts";

/**
 * How many times the PreToolUse hooks run for one call at most: again on each rewritten input,
 * until none rewrites it any more (see {@linkcode HookRunner.fire}).
 */
export const MAX_REWRITE_ROUNDS = 3;

/** The longest delay a timer takes (2^31 - 1 ms); a longer one fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The most characters of a hook's output (its answer, stderr and tern's markers) kept whole;
 * past them its answer cannot be read, and the hook counts as one that could not run.
 */
const MAX_HOOK_OUTPUT_CHARS = 4_000_000;

/** What the hooks of one event decided together. */
export interface HookOutcome {
  /** Why the action is blocked (exit 2's stderr, a `deny` or `block` reason). */
  block?: string;
  /** A PreToolUse hook asked for the person's decision, with its reason. */
  ask?: string;
  /** The tool input a PreToolUse hook rewrote (the last one's, in configuration order). */
  updatedInput?: Record<string, unknown>;
  /** Text for the model (`additionalContext`; plain stdout of UserPromptSubmit, SessionStart). */
  context: string[];
  /** `continue: false`: the turn stops, with this reason for the person. */
  stop?: string;
  /**
   * For the person: hooks that could not run, failed, timed out or answered JSON that cannot be
   * read. Whoever fires the hooks shows them (see {@linkcode HookRunner.tell}).
   */
  notes: string[];
}

/** How {@linkcode HookRunner.fire} runs the hooks of one event. */
export interface FireOptions {
  /** The tool the event is for (PreToolUse, PostToolUse): the hooks whose matcher names it. */
  toolName?: string;
  callId?: string;
  /**
   * Stops the hooks (Esc, a cancelled turn); they count as hooks that could not run. A string
   * `reason` says why, after "as" (`tern was closing and was interrupted`).
   */
  signal?: AbortSignal;
  /** The most seconds any hook may run, below its own `timeout` (SessionEnd at a close). */
  maxTimeoutS?: number;
}

/** Where hooks run and where their runs are recorded. */
export interface HookRunnerOptions {
  /** The trusted hooks. */
  hooks: readonly HookCommand[];
  /**
   * The sandbox's shell runner, or why commands are not confined here. Hooks run only inside
   * bubblewrap: without it (no bubblewrap, `:danger-full-access`, `--no-sandbox`) no hook runs,
   * and a runner that is not confined is never used.
   */
  shell: () => { run: ShellRunner; confined: boolean } | string | undefined;
  /**
   * Told what the person must know: once, the first time a hook does not run because commands
   * are not confined; once per hook that cannot start in the sandbox (exit code 126 or 127:
   * its program is not there or not executable); once per change of a trusted project hook's
   * pinned files; and the notes of each outcome, through {@linkcode HookRunner.tell}.
   */
  warn?: (text: string) => void;
  workspace: string;
  sessionId: string;
  transcriptPath: string;
  audit?: (record: AuditRecord) => void;
  /** For the audit record. */
  profile: string;
  mode: AuditRecord["mode"];
}

/** The hooks of a session. */
export class HookRunner {
  readonly #options: HookRunnerOptions;
  #warned = false;
  /** The hooks the person was told cannot start (see `#cannotStart`). */
  readonly #unstartable = new Set<string>();
  /** The changes of pinned files the person was told of (see `#pinsChanged`). */
  readonly #told = new Set<string>();

  constructor(options: HookRunnerOptions) {
    this.#options = options;
  }

  /** Whether any hook listens to `event` (for `toolName`, when given). */
  has(event: HookEvent, toolName?: string): boolean {
    return this.#options.hooks.some((hook) =>
      hook.event === event && (toolName === undefined || matches(hook.matcher, toolName))
    );
  }

  /**
   * Tells the person `text` (a note of an outcome, masked by the caller) the way the runner's
   * own warnings reach them.
   */
  tell(text: string): void {
    this.#options.warn?.(text);
  }

  /**
   * Runs the hooks of `event` that match `toolName` (all at once, as Claude Code does) with
   * `fields` added to the common input, and merges their answers: a block or deny wins over
   * ask, ask over allow (which is no opinion here). A PreToolUse hook that could not run asks
   * (see the module's notes). The caller shows `notes` to the person.
   */
  async fire(
    event: HookEvent,
    fields: Record<string, unknown>,
    options: FireOptions = {},
  ): Promise<HookOutcome> {
    const outcome = await this.#fireOnce(event, fields, options);
    if (event !== "PreToolUse") return outcome;
    // Every hook judges what will run: a rewritten input goes to all of them again, until no
    // hook changes it any more, at most MAX_REWRITE_ROUNDS rounds in all. What any round
    // blocked or asked stands; the context is the last round's.
    let input = fields.tool_input;
    for (let round = 1; changes(outcome.updatedInput, input); round++) {
      if (round === MAX_REWRITE_ROUNDS) {
        const block = `The PreToolUse hooks still rewrote this call after ${round} rounds ` +
          "(each rewritten input goes to every hook again), so no input was judged by all of them";
        outcome.block = outcome.block === undefined ? block : `${outcome.block}\n${block}`;
        break;
      }
      input = outcome.updatedInput;
      const again = await this.#fireOnce(event, { ...fields, tool_input: input }, options);
      if (again.block !== undefined) {
        outcome.block = outcome.block === undefined
          ? again.block
          : `${outcome.block}\n${again.block}`;
      }
      outcome.ask ??= again.ask;
      outcome.stop ??= again.stop;
      outcome.context = again.context;
      outcome.notes.push(...again.notes.filter((note) => !outcome.notes.includes(note)));
      if (again.updatedInput !== undefined) outcome.updatedInput = again.updatedInput;
    }
    return outcome;
  }

  /** Runs the hooks of `event` once (see {@linkcode fire}). */
  async #fireOnce(
    event: HookEvent,
    fields: Record<string, unknown>,
    options: FireOptions,
  ): Promise<HookOutcome> {
    const outcome: HookOutcome = { context: [], notes: [] };
    const chosen = this.#options.hooks.filter((hook) =>
      hook.event === event && matches(hook.matcher, options.toolName)
    );
    if (chosen.length === 0) return outcome;
    const input = {
      session_id: this.#options.sessionId,
      transcript_path: this.#options.transcriptPath,
      cwd: this.#options.workspace,
      hook_event_name: event,
      ...fields,
    };
    const answers = await Promise.all(
      chosen.map((hook) => this.#runOne(hook, input, options)),
    );
    for (const answer of answers) merge(outcome, answer, event);
    return outcome;
  }

  async #runOne(
    hook: HookCommand,
    input: Record<string, unknown>,
    options: FireOptions,
  ): Promise<Answer> {
    const started = performance.now();
    const shell = this.#options.shell();
    let answer: Answer;
    let exitCode: number | null = null;
    if (typeof shell !== "object" || !shell.confined) {
      const why = typeof shell === "string"
        ? shell
        : "commands cannot be confined here (no bubblewrap)";
      // Told once for the session, not with every call: kept out of the notes.
      answer = {
        note: `The ${hook.event} hook "${shownCommand(hook)}" did not run: ${why}`,
        told: true,
      };
      if (!this.#warned) {
        this.#warned = true;
        this.#options.warn?.(
          `No hooks run in this session: hooks run only inside the bubblewrap sandbox (${why})`,
        );
      }
    } else {
      answer = await this.#confined(hook, input, shell.run, options);
      exitCode = answer.exitCode ?? null;
    }
    const confined = typeof shell === "object" ? shell.confined : undefined;
    this.#audit(hook, answer, exitCode, options, performance.now() - started, confined);
    return answer;
  }

  /** Runs `hook` through the confined `run`. */
  async #confined(
    hook: HookCommand,
    input: Record<string, unknown>,
    run: ShellRunner,
    options: FireOptions,
  ): Promise<Answer> {
    const { signal } = options;
    const timeoutS = Math.min(hook.timeoutS, options.maxTimeoutS ?? Infinity);
    const marker = `TERN_HOOK_${crypto.randomUUID().replaceAll("-", "")}`;
    const { workspace } = this.#options;
    let json = JSON.stringify(input);
    let script = await hookScript(hook.command, json, { marker, workspace });
    // A PostToolUse hook runs all the same, on a tool output cut (in its middle) to fit.
    for (let keep = 0.5; script === undefined && keep > 0.001; keep /= 4) {
      const cut = withOutputCut(input, keep);
      if (cut === undefined) break;
      json = JSON.stringify(cut);
      script = await hookScript(hook.command, json, { marker, workspace });
    }
    if (script === undefined) {
      return unable(hook, `its input (${json.length} characters) is too large to pass to it`);
    }
    // A trusted project hook runs its checked copies, bound over the workspace's files.
    const frozen = hook.scope === "user" || hook.pins === undefined
      ? undefined
      : await freezePins(hook.pins, workspace);
    // Checked after the copies' marks: a file added before them is seen here, one added after
    // them by `moved()`.
    const changed = await this.#pinsChanged(hook);
    if (typeof frozen === "string") {
      return unable(hook, changed ?? this.#pinsTold(hook, frozen), true);
    }
    if (changed !== undefined) {
      await frozen?.release();
      return unable(hook, changed, true);
    }
    let result;
    let failed: string | undefined;
    // The runner keeps only the ends of a long output: the hook's is kept whole here, up to a cap.
    const pieces: string[] = [];
    let printed = 0;
    try {
      result = await run(script, {
        cwd: workspace,
        timeoutMs: Math.min(timeoutS * 1000, MAX_TIMER_MS),
        signal,
        onOutput: (text) => {
          printed += text.length;
          if (printed <= MAX_HOOK_OUTPUT_CHARS) pieces.push(text);
        },
        // The person's own hooks, and only theirs, see their scripts in tern's home.
        ...(hook.scope === "user" ? { hookScripts: true } : {}),
        ...(frozen === undefined ? {} : { replaced: frozen.copies }),
      });
    } catch (error) {
      failed = `it could not start: ${error instanceof Error ? error.message : error}`;
    }
    const moved = await frozen?.moved() ?? [];
    await frozen?.release();
    if (moved.length > 0) {
      // Its answer may come from other files than those checked: it did not run as trusted.
      const names = moved.map((name) => `"${visibleText(name)}"`).join(", ");
      return unable(hook, `its files were moved or replaced while it ran: ${names}`);
    }
    if (result === undefined) return unable(hook, failed ?? "it could not start");
    if (result.timedOut) {
      const after = `after ${timeoutS} s` +
        (timeoutS < hook.timeoutS ? ", the most it may run here" : "");
      // A guard that never finished its check did not pass the call: the model can make one
      // hang (a FIFO where it reads a file, or a FIFO `.gitignore` under its `git status`).
      if (hook.event === "PreToolUse") return unable(hook, `it timed out ${after}`);
      return { note: `The ${hook.event} hook "${shownCommand(hook)}" timed out ${after}` };
    }
    // Stopped (Esc, a cancelled turn or compaction): its output ends anywhere, and says nothing.
    if (signal?.aborted) {
      const why = typeof signal.reason === "string"
        ? signal.reason
        : "what it ran for was cancelled";
      return unable(hook, `it was stopped, as ${why}`);
    }
    const whole = printed <= MAX_HOOK_OUTPUT_CHARS;
    // Cut, its exit code (at the end) still reads, and exit code 2 blocks without its text.
    const ran = unwrap(whole ? pieces.join("") : result.output, marker);
    if (ran === undefined) {
      return unable(hook, `its sandbox failed: ${result.output.trim().slice(-300)}`);
    }
    if (ran.code === 126 || ran.code === 127) {
      // What bash gives for a program not executable or not found: the hook did not run.
      this.#cannotStart(hook, ran);
      const what = ran.code === 127 ? "not found" : "not executable";
      const why = `a program it names was ${what} (exit code ${ran.code})`;
      return { ...unable(hook, why, true), exitCode: ran.code };
    }
    if (!whole && ran.code !== 2) {
      // An answer read from the output's ends (a guard's JSON quoting the model's input) would
      // be another, or none at all: never a hook that had no objection.
      const why = `its output (${printed} characters) was too large to read whole`;
      return { ...unable(hook, why), exitCode: ran.code };
    }
    return { ...interpret(hook, ran), exitCode: ran.code };
  }

  /**
   * Why a trusted project hook may not run: a file trust pinned for it (its script, the files
   * beside it) changed since, so what would run is not what the person trusted (the model may
   * write the workspace). Told once per change. Undefined when all still hash the same, or the
   * hook pins nothing (the person's own).
   */
  async #pinsChanged(hook: HookCommand): Promise<string | undefined> {
    if (hook.scope === "user" || hook.pins === undefined) return undefined;
    const now = await hookPins(hook, this.#options.workspace);
    const changes = pinChanges(hook.pins, now);
    if (changes.length === 0) return undefined;
    return this.#pinsTold(hook, `its files changed since you trusted it: ${changes.join(", ")}`);
  }

  /** `why` a trusted project hook will not run (its files changed), told once per change. */
  #pinsTold(hook: HookCommand, why: string): string {
    const key = JSON.stringify([hook.event, hook.matcher, hook.command, why]);
    if (!this.#told.has(key)) {
      this.#told.add(key);
      this.#options.warn?.(
        `The ${hook.event} hook "${shownCommand(hook)}" will not run: ${why}. Review the files ` +
          "with `tern hooks list`, then run `tern hooks trust <digest>` with the digest it shows",
      );
    }
    return why;
  }

  /**
   * Tells the person, once per hook, that it exited 126 or 127 (what bash gives for a program
   * not executable or not found) and so guards nothing: a hook that fails blocks nothing, and
   * the audit log alone would keep it silent.
   */
  #cannotStart(hook: HookCommand, ran: { stderr: string; code: number }): void {
    const key = JSON.stringify([hook.event, hook.matcher, hook.command]);
    if (this.#unstartable.has(key)) return;
    this.#unstartable.add(key);
    const what = ran.code === 127 ? "not found" : "not executable";
    const detail = ran.stderr.trim().split("\n").at(-1)?.slice(0, 300) ?? "";
    const scripts = hook.file === undefined ? "" : join(dirname(hook.file), HOOK_SCRIPTS_FOLDER);
    const sees = hook.scope === "user" && scripts !== ""
      ? `your own hooks see the workspace and "${scripts}" (read-only, when it is a real ` +
        `folder, not a link), nothing else of tern's home`
      : `a project's hooks see the workspace, never tern's home`;
    const so = hook.event === "PreToolUse"
      ? "so each call it should check needs your decision"
      : "so it blocks nothing";
    this.#options.warn?.(
      `The ${hook.event} hook "${shownCommand(hook)}" cannot run: a program it names was ${what} ` +
        `in the sandbox (exit code ${ran.code}${detail === "" ? "" : `: ${detail}`}), ${so}. ` +
        `Hooks run in the commands' sandbox, which hides most of your home folder: ${sees}`,
    );
  }

  #audit(
    hook: HookCommand,
    answer: Answer,
    exitCode: number | null,
    options: { toolName?: string; callId?: string },
    ms: number,
    confined: boolean | undefined,
  ): void {
    const blocked = answer.block !== undefined;
    this.#options.audit?.({
      v: 1,
      time: new Date().toISOString(),
      session: this.#options.sessionId,
      callId: options.callId ?? hook.event,
      tool: `hook:${hook.event}`,
      args: {
        command: hook.command,
        matcher: hook.matcher,
        ...(options.toolName === undefined ? {} : { for: options.toolName }),
      },
      profile: this.#options.profile,
      mode: this.#options.mode,
      decision: blocked ? "deny" : "allow",
      decidedBy: "hook",
      reason: answer.block ?? answer.stop ?? answer.ask ?? answer.note ??
        (answer.updatedInput ? "rewrote the tool input" : "no objection"),
      sandbox: confined === undefined ? "none" : confined ? "bwrap" : "none",
      status: answer.note === undefined ? "SUCCEEDED" : "ERROR",
      ...(answer.note === undefined
        ? {}
        : { code: answer.note.includes("timed out") ? "TIMEOUT" : "EXECUTION_FAILED" }),
      ...(exitCode === null ? {} : { exitCode }),
      durationMs: Math.round(ms),
    });
  }
}

/**
 * The answer of a hook that could not run (`why`): no opinion, noted, except for PreToolUse,
 * where it asks (see the module's notes). `told`: the person heard of it by a warning already.
 */
function unable(hook: HookCommand, why: string, told = false): Answer {
  const name = `The ${hook.event} hook "${shownCommand(hook)}"`;
  const note = `${name} could not run: ${why}`;
  if (hook.event !== "PreToolUse") return { note, told };
  return {
    ask: `${name} could not run, so it could not check this call (${why}): you decide`,
    note: `${note}; the call it should have checked needs a person's decision`,
    told,
  };
}

/**
 * Text a hook gave the model (context, an objection, a reason to go on), framed so that nothing
 * in it can end the frame: its markers carry a random id the text cannot know. What a hook prints
 * may be a repository's words (`cat NOTES.md`), never the person's, whatever it claims.
 */
export function hookFrame(what: string, texts: readonly string[]): string {
  const id = crypto.randomUUID().slice(0, 8);
  return [
    `--- BEGIN ${what} ${id} (a hook's output: context, not the person's words) ---`,
    ...texts,
    `--- END ${what} ${id} ---`,
  ].join("\n");
}

/** The common input plus the tool fields of PreToolUse and PostToolUse. */
export function toolFields(
  toolName: string,
  toolInput: unknown,
  callId: string | undefined,
): Record<string, unknown> {
  return {
    tool_name: claudeToolName(toolName),
    tern_tool_name: toolName,
    tool_input: toolInput,
    ...(callId ? { tool_use_id: callId } : {}),
  };
}

/**
 * `input` with its `tool_response.output` (PostToolUse) cut to about `keep` of its length, the
 * middle left out and said so, and `tern_output_cut` the characters cut; undefined when it has
 * no such output.
 */
function withOutputCut(
  input: Record<string, unknown>,
  keep: number,
): Record<string, unknown> | undefined {
  const response = input.tool_response;
  if (!isObject(response) || typeof response.output !== "string") return undefined;
  const output = response.output;
  const half = Math.floor(output.length * keep / 2);
  const cut = output.length - 2 * half;
  const said = `\n[tern: ${cut} characters of the output were cut here: a hook's input must ` +
    "fit in one command line]\n";
  return {
    ...input,
    tool_response: {
      ...response,
      output: output.slice(0, half) + said + output.slice(output.length - half),
    },
    tern_output_cut: cut,
  };
}

/** Whether `rewritten` (a hook's `updatedInput`, if any) differs from `input`. */
function changes(rewritten: Record<string, unknown> | undefined, input: unknown): boolean {
  return rewritten !== undefined && JSON.stringify(rewritten) !== JSON.stringify(input);
}

function merge(outcome: HookOutcome, answer: Answer, event: HookEvent): void {
  if (answer.block !== undefined) {
    outcome.block = outcome.block === undefined
      ? answer.block
      : `${outcome.block}\n${answer.block}`;
  }
  if (answer.ask !== undefined) outcome.ask ??= answer.ask;
  if (answer.updatedInput !== undefined && event === "PreToolUse") {
    outcome.updatedInput = answer.updatedInput;
  }
  if (answer.context) outcome.context.push(answer.context);
  if (answer.stop !== undefined) {
    outcome.stop ??= answer.stop;
    // A tool call's hook that stops the agent at least blocks the call.
    if (event === "PreToolUse" && outcome.block === undefined) outcome.block = answer.stop;
  }
  if (answer.note !== undefined && !answer.told) outcome.notes.push(answer.note);
}
