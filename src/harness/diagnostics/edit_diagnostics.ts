/**
 * Diagnostics after edits: when `write`, `edit` or `multi_edit` changed a file a checker knows
 * (src/harness/diagnostics/checkers.ts), the checker runs in the sandbox's shell — the same
 * confinement as the agent's commands, with a timeout — and the tool's result gets what is new
 * for that file since the last check of it: the errors an edit brought in, or the news that
 * the ones reported before are gone. Bounded: a few lines, each cut.
 */
import { relative } from "../../core/path.ts";
import type { ShellRunner } from "../../sandbox/types.ts";
import type { DiagnosticsSettings } from "../../config/types.ts";
import { type Checker, CheckerTable } from "./checkers.ts";
import { type Diagnostic, parseDiagnostics } from "./parse.ts";

/** The shell a check runs in: the sandbox's, and whether it confines. */
export interface CheckShell {
  run: ShellRunner;
  /** `bwrap`: confined; `none`: the person turned the sandbox off; `unavailable`: no runs. */
  kind: "bwrap" | "none" | "unavailable";
}

/** Diagnostics shown after one tool call, at most. */
export const MAX_SHOWN = 10;
/** The longest diagnostic line shown. */
const MAX_LINE = 300;
const DEFAULT_TIMEOUT_MS = 30_000;

/** The checks of one conversation, and what each file's last check found. */
export class EditDiagnostics {
  #workspace: string;
  #table: CheckerTable;
  #timeoutMs: number;
  #shell: () => Promise<CheckShell>;
  /** The last check's findings per file (absolute path), as `severity|message` keys. */
  #known = new Map<string, string[]>();
  /** Problems said once (a checker that cannot run). */
  #said = new Set<string>();
  /** The last check queued; checks run one after another. */
  #queue: Promise<unknown> = Promise.resolve();
  /** Notes of checks that ended after the result of their change went out. */
  #late: string[] = [];

  constructor(options: {
    workspace: string;
    /** The PATH shell commands get: built-in checkers are looked up on it. */
    path: string;
    settings?: DiagnosticsSettings;
    shell: () => Promise<CheckShell>;
  }) {
    this.#workspace = options.workspace;
    this.#table = new CheckerTable(options.workspace, options.path, options.settings?.checkers);
    this.#timeoutMs = options.settings?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#shell = options.shell;
  }

  /**
   * Checks `file` after a change, after the checks before it (one at a time, in order): the
   * note if the check ends within `waitMs`, else a line saying it is still running, and its
   * note joins {@linkcode takeLate} when it ends. Never throws.
   */
  async check(file: string, waitMs: number): Promise<string | undefined> {
    const checker = this.#table.checkerFor(file);
    if (checker === undefined) return undefined;
    const run = this.#queue.then(() => this.after(file));
    this.#queue = run;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waited = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), waitMs);
    });
    const first = await Promise.race([run, waited]);
    clearTimeout(timer);
    if (first !== "late") return first;
    void run.then((note) => {
      if (note !== undefined) {
        this.#late.push(`${note}\n(from a check that ended after its change's result)`);
      }
    });
    const name = relative(this.#workspace, file) || file;
    return `Diagnostics (${checker.name}) for "${name}" are still running; ` +
      "what they find comes with a later tool result";
  }

  /** Notes of checks that ended after their change's result, taken once. */
  takeLate(): string[] {
    return this.#late.splice(0);
  }

  /** Resolves when no check runs. */
  async idle(): Promise<void> {
    await this.#queue;
  }

  /**
   * Checks `file` (absolute, just changed) and says what is new about it, for the end of the
   * tool's result; undefined when there is nothing to say. Never throws.
   */
  async after(file: string, signal?: AbortSignal): Promise<string | undefined> {
    const checker = this.#table.checkerFor(file);
    if (checker === undefined) return undefined;
    const shell = await this.#shell().catch(() => undefined);
    if (shell === undefined || shell.kind === "unavailable") {
      return this.#once(checker, "commands cannot be confined here, so it does not run");
    }
    let found: Diagnostic[];
    try {
      const result = await shell.run(checker.command(file), {
        cwd: this.#workspace,
        timeoutMs: this.#timeoutMs,
        signal,
      });
      if (result.cancelled || signal?.aborted) return undefined;
      if (result.timedOut) {
        return this.#once(checker, `it took longer than ${this.#timeoutMs / 1000} s`);
      }
      const all = parseDiagnostics(result.output, checker.format, this.#workspace);
      if (result.code !== 0 && all.length === 0) {
        const last = result.output.trim().split("\n").at(-1)?.slice(0, MAX_LINE) ?? "";
        return this.#once(checker, `it ended with exit code ${result.code}: ${last}`);
      }
      found = all.filter((d) => d.path === file);
    } catch (error) {
      return this.#once(checker, error instanceof Error ? error.message : String(error));
    }
    return this.#report(checker, file, found);
  }

  #report(checker: Checker, file: string, found: Diagnostic[]): string | undefined {
    const before = this.#known.get(file) ?? [];
    this.#known.set(file, found.map(key));
    const left = [...before];
    const fresh = found.filter((d) => {
      const at = left.indexOf(key(d));
      if (at === -1) return true;
      left.splice(at, 1);
      return false;
    });
    const name = relative(this.#workspace, file) || file;
    const head = `Diagnostics (${checker.name}) for "${name}"`;
    if (fresh.length === 0) {
      if (before.length === 0) return undefined;
      if (found.length === 0) {
        return `${head}: none now (the ${before.length} reported before are gone)`;
      }
      return `${head}: nothing new (${found.length} reported before remain)`;
    }
    fresh.sort((a, b) => rank(a) - rank(b) || a.line - b.line);
    const lines = fresh.slice(0, MAX_SHOWN).map((d) => {
      const where = `${name}:${d.line}${d.column === undefined ? "" : `:${d.column}`}`;
      const text = `${where} ${d.severity}: ${d.message.replace(/\s+/g, " ")}`;
      return text.length > MAX_LINE ? `${text.slice(0, MAX_LINE - 1)}…` : text;
    });
    if (fresh.length > MAX_SHOWN) lines.push(`… and ${fresh.length - MAX_SHOWN} more`);
    const errors = fresh.filter((d) => d.severity === "error").length;
    const count = errors > 0 ? `${errors} new error${errors === 1 ? "" : "s"}` : "new findings";
    return `${head}: ${count}; fix them before going on:\n${lines.join("\n")}`;
  }

  #once(checker: Checker, why: string): string | undefined {
    const text = `Diagnostics (${checker.name}) unavailable: ${why}`;
    if (this.#said.has(text)) return undefined;
    this.#said.add(text);
    return text;
  }
}

function key(d: Diagnostic): string {
  return `${d.severity}|${d.message}`;
}

function rank(d: Diagnostic): number {
  return d.severity === "error" ? 0 : d.severity === "warning" ? 1 : 2;
}
