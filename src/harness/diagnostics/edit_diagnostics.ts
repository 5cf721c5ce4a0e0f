/**
 * Diagnostics after edits: when `write`, `edit` or `multi_edit` changed a file a language
 * server (servers.ts) or a checker (checkers.ts) knows, the tool's result gets what is new for
 * that file since the last look at it: the errors an edit brought in, or the news that the
 * ones reported before are gone. Bounded: a few lines, each cut. A language server starts at
 * the first change of one of its files, in the sandbox as the agent's commands run, and stays
 * for the session (`close()` stops it), started again when the sandbox's view changed; a
 * checker runs once per change in the sandbox's shell, with a timeout. A server that cannot
 * start or ends leaves its files to the checker.
 */
import { relative } from "../../core/path.ts";
import { quotedName } from "../../tools/paths.ts";
import type { ShellRunner } from "../../sandbox/types.ts";
import type { BackgroundLaunch } from "../../sandbox/background_launch.ts";
import type { DiagnosticsSettings } from "../../config/types.ts";
import { type ReadRefusal, readWorkspaceText } from "../../config/workspace_file.ts";
import { type Checker, CheckerTable } from "./checkers.ts";
import { type Diagnostic, parseDiagnostics } from "./parse.ts";
import { Programs } from "./programs.ts";
import { ServerTable } from "./servers.ts";
import type { LanguageServer, ServerSpec } from "./language_server.ts";
import { LATE_DIAGNOSTICS_END } from "../../session/voice.ts";
import { plainLine } from "../../core/invisible_text.ts";
import { SecretMasker } from "../../sandbox/secrets.ts";

/** The shell a check runs in: the sandbox's, and whether it confines. */
export interface CheckShell {
  run: ShellRunner;
  /** `bwrap`: confined; `none`: the person turned the sandbox off; `unavailable`: no runs. */
  kind: "bwrap" | "none" | "unavailable";
  /**
   * How the sandbox starts a language server (`SandboxRuntime.serverLaunch`): confined as a
   * command is. Without it no server runs.
   */
  launch?: (argv: readonly string[], options: { cwd: string }) => Promise<BackgroundLaunch>;
}

/** The largest file sent to a language server; a larger one goes to the checker. */
const MAX_SERVER_FILE = 2_000_000;

/** Diagnostics shown after one tool call, at most. */
export const MAX_SHOWN = 10;
/** The longest diagnostic line shown. */
const MAX_LINE = 300;
/** The longest reason shown for a checker or server that cannot say (a server's error text). */
const MAX_WHY = 500;
const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * Where a language server starts: it learns the workspace from `initialize`, and a version
 * manager's shim on PATH (asdf, mise) would read a version file of the folder it starts in,
 * which may name a program of the repository's (see checkers.ts).
 */
const SERVER_CWD = "/";

/** The checks of one conversation, and what each file's last check found. */
export class EditDiagnostics {
  #workspace: string;
  #table: CheckerTable;
  #servers: ServerTable;
  /** The servers started (or starting), by name; a failed start is its reason. */
  #running = new Map<string, Promise<LanguageServer | string | undefined>>();
  /** The sandbox's view each server was started in, by name (see {@linkcode viewOf}). */
  #views = new Map<string, string>();
  /** Servers that failed or ended: their files go to the checker. */
  #failed = new Set<string>();
  /** Checkers that ran past the time limit: not run again this session. */
  #stopped = new Set<string>();
  #timeoutMs: number;
  #shell: () => Promise<CheckShell>;
  #refuse: ReadRefusal;
  /** The last check's findings per file (absolute path), as `severity|message` keys. */
  #known = new Map<string, string[]>();
  /** Problems said once (a checker that cannot run). */
  #said = new Set<string>();
  /** The last check queued; checks run one after another. */
  #queue: Promise<unknown> = Promise.resolve();
  /** Notes of checks that ended after the result of their change went out. */
  #late: string[] = [];
  #mask: (text: string) => string;

  constructor(options: {
    workspace: string;
    /** The PATH shell commands get: built-in checkers are looked up on it. */
    path: string;
    settings?: DiagnosticsSettings;
    shell: () => Promise<CheckShell>;
    /**
     * What the model's own tools may not read (src/harness/read_guard.ts): a file a language
     * server would be sent is read in tern's own process, so a link a command made to a secret
     * must not carry it there (and into the diagnostics the model reads).
     */
    refuse: ReadRefusal;
    /**
     * Masks the keys tern knows of in a note (default: the key formats the masker knows). A
     * finding may quote the file (a type error names a string's literal type), and the file's
     * keys were masked where the model read it.
     */
    mask?: (text: string) => string;
  }) {
    this.#workspace = options.workspace;
    const formats = new SecretMasker();
    this.#mask = options.mask ?? ((text) => formats.mask(text));
    this.#refuse = options.refuse;
    const programs = new Programs(options.workspace, options.path);
    this.#table = new CheckerTable(options.workspace, programs, options.settings?.checkers);
    this.#servers = new ServerTable(
      options.workspace,
      programs,
      options.settings?.languageServers ?? true,
    );
    this.#timeoutMs = options.settings?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#shell = options.shell;
  }

  /**
   * Checks `file` after a change, after the checks before it (one at a time, in order): the
   * note if the check ends within `waitMs`, else a line saying it is still running, and its
   * note joins {@linkcode takeLate} when it ends. Never throws.
   */
  async check(file: string, waitMs: number): Promise<string | undefined> {
    const checker = this.#serverFor(file) ?? this.#table.checkerFor(file);
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
        this.#late.push(`${note}${LATE_DIAGNOSTICS_END}`);
      }
    });
    const name = quotedHead(relative(this.#workspace, file) || file);
    return this.#mask(
      `Diagnostics (${checker.name}) for ${name} are still running; ` +
        "what they find comes with a later tool result",
    );
  }

  /** Notes of checks that ended after their change's result, taken once. */
  takeLate(): string[] {
    return this.#late.splice(0);
  }

  /** Resolves when no check runs. */
  async idle(): Promise<void> {
    await this.#queue;
  }

  /** The language servers running now, with their process groups' ids. */
  async servers(): Promise<{ name: string; pid: number }[]> {
    const all = await Promise.all([...this.#running.values()]);
    return all.flatMap((server) =>
      server === undefined || typeof server === "string"
        ? []
        : [{ name: server.spec.name, pid: server.pid }]
    );
  }

  /** Stops every language server (their process groups). Never throws. */
  async close(): Promise<void> {
    const all = await Promise.all([...this.#running.values()]);
    this.#running.clear();
    await Promise.all(all.map((server) => typeof server === "object" ? server.close() : undefined));
  }

  /**
   * Checks `file` (absolute, just changed) and says what is new about it, for the end of the
   * tool's result; undefined when there is nothing to say. Never throws.
   */
  async after(file: string, signal?: AbortSignal): Promise<string | undefined> {
    const spec = this.#serverFor(file);
    if (spec !== undefined) {
      const note = await this.#viaServer(spec, file);
      if (note !== "fallback") return note;
    }
    const checker = this.#table.checkerFor(file);
    if (checker === undefined || this.#stopped.has(checker.name)) return undefined;
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
        // A file the check reads can be made to stall it (a FIFO the edited file imports): each
        // later edit would wait the whole limit again, so it is not run again this session.
        this.#stopped.add(checker.name);
        return this.#once(
          checker,
          `it took longer than ${this.#timeoutMs / 1000} s, so it is not run again this session`,
        );
      }
      const from = checker.from === "/" ? "/" : this.#workspace;
      const all = parseDiagnostics(result.output, checker.format, from);
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

  /** The server for `file`, unless the person's own checker or a failure says otherwise. */
  #serverFor(file: string): ServerSpec | undefined {
    if (this.#table.isOwn(file)) return undefined;
    const spec = this.#servers.serverFor(file);
    return spec === undefined || this.#failed.has(spec.name) ? undefined : spec;
  }

  /**
   * What `spec`'s server finds in `file`, started at its first file; "fallback" when it cannot
   * say (it cannot start, it ended, the file is too large): the checker looks then.
   */
  /**
   * The text of `file` for a server: read as a tool reads (confined to the workspace, no link
   * out, one hard link, at most MAX_SERVER_FILE bytes) and only where `refuse` lets the model
   * read it; undefined otherwise.
   */
  #readFile(file: string): string | undefined {
    try {
      return readWorkspaceText(this.#workspace, file, {
        what: "file",
        warn: () => {},
        maxBytes: MAX_SERVER_FILE,
        refuse: this.#refuse,
      });
    } catch {
      return undefined;
    }
  }

  async #viaServer(spec: ServerSpec, file: string): Promise<string | undefined | "fallback"> {
    const text = this.#readFile(file);
    if (text === undefined) return "fallback";
    let starting = this.#running.get(spec.name);
    if (starting === undefined) {
      starting = this.#start(spec);
      this.#running.set(spec.name, starting);
    }
    let server = await starting;
    if (typeof server === "object") server = await this.#inViewNow(spec, server);
    const failed = (why: string) => {
      this.#failed.add(spec.name);
      this.#running.delete(spec.name);
      const note = this.#once({ name: spec.name }, why);
      return note === undefined ? "fallback" as const : note;
    };
    if (server === undefined) {
      // This shell starts no servers: its checker looks, and nothing needs saying.
      this.#failed.add(spec.name);
      this.#running.delete(spec.name);
      return "fallback";
    }
    if (typeof server === "string") {
      const note = failed(server);
      // Said once; the checker looks at this file all the same.
      return note === "fallback" ? note : await this.#withChecker(note, file);
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const outcome = await Promise.race([
      server.diagnose(file, text).catch((error) => String(error?.message ?? error)),
      server.ended,
      new Promise<"timeout">((resolve) =>
        timer = setTimeout(() => resolve("timeout"), this.#timeoutMs)
      ),
    ]);
    clearTimeout(timer);
    if (Array.isArray(outcome)) return this.#report(spec, file, outcome);
    if (outcome === "timeout") {
      // A server that does not answer is stopped: every later edit would wait as long.
      await server.close();
      return await this.#withChecker(
        failed(`it took longer than ${this.#timeoutMs / 1000} s, so it was stopped`),
        file,
      );
    }
    // The connection fails just before the process is seen to end: how it ended says more.
    const ended = await Promise.race([
      server.ended,
      new Promise<string>((resolve) => timer = setTimeout(() => resolve(outcome), 1_000)),
    ]);
    clearTimeout(timer);
    void server.close();
    return await this.#withChecker(failed(ended), file);
  }

  /** `note` and what the checker of `file` finds, when there is a checker. */
  async #withChecker(note: string | "fallback", file: string): Promise<string | undefined> {
    const checked = await this.after(file);
    if (note === "fallback") return checked;
    return checked === undefined ? note : `${note}\n${checked}`;
  }

  /**
   * `server` when the sandbox would start it in the same view now, else a new server started
   * in the view now (the old one stopped): the server reads the files its file imports itself,
   * and a file a deny rule hides that appeared after it started (a folder a command or the
   * person's editor made) is hidden from it as from the next command. A view that cannot be
   * built fails the server (its reason), as a start would.
   */
  async #inViewNow(
    spec: ServerSpec,
    server: LanguageServer,
  ): Promise<LanguageServer | string | undefined> {
    let launch: BackgroundLaunch;
    try {
      const shell = await this.#shell();
      // Unconfined (the person turned the sandbox off), a server sees what commands see.
      if (shell.kind !== "bwrap" || shell.launch === undefined) return server;
      launch = await shell.launch(spec.argv, { cwd: SERVER_CWD });
    } catch (error) {
      await server.close();
      return error instanceof Error ? error.message : String(error);
    }
    if (viewOf(launch) === this.#views.get(spec.name)) {
      launch.release?.();
      return server;
    }
    await server.close();
    const started = this.#start(spec, launch);
    this.#running.set(spec.name, started);
    return await started;
  }

  /**
   * The server started (from `launched`, else a launch built now); why not; undefined when the
   * shell starts none.
   */
  async #start(
    spec: ServerSpec,
    launched?: BackgroundLaunch,
  ): Promise<LanguageServer | string | undefined> {
    try {
      let launch = launched;
      if (launch === undefined) {
        const shell = await this.#shell();
        if (shell.kind === "unavailable") {
          return "commands cannot be confined here, so it does not run";
        }
        if (shell.launch === undefined) return undefined;
        launch = await shell.launch(spec.argv, { cwd: SERVER_CWD });
      }
      this.#views.set(spec.name, viewOf(launch));
      const { LanguageServer } = await import("./language_server.ts");
      return await LanguageServer.start(spec, launch, {
        workspace: this.#workspace,
        timeoutMs: this.#timeoutMs,
        readFile: (file) => this.#readFile(file),
      });
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  #report(checker: Pick<Checker, "name">, file: string, found: Diagnostic[]): string | undefined {
    const before = this.#known.get(file) ?? [];
    this.#known.set(file, found.map(key));
    const fresh = freshFindings(before, found);
    // The repository names its files: a line break in a name must not start a line of its own.
    const name = relative(this.#workspace, file) || file;
    const head = `Diagnostics (${checker.name}) for ${quotedHead(name)}`;
    if (fresh.length === 0) {
      if (before.length === 0) return undefined;
      if (found.length === 0) {
        return this.#mask(`${head}: none now (the ${before.length} reported before are gone)`);
      }
      return this.#mask(`${head}: nothing new (${found.length} reported before remain)`);
    }
    fresh.sort((a, b) => rank(a) - rank(b) || a.line - b.line);
    const lines = fresh.slice(0, MAX_SHOWN).map((d) => {
      const where = `${quotedName(name)}:${d.line}${d.column === undefined ? "" : `:${d.column}`}`;
      // The name is quoted as the repository's names are (quotedName); the message is one
      // clean line, as a server may write anything there, masked before it is cut (a key cut
      // short no longer looks like one).
      const text = `${where} ${d.severity}: ${
        plainLine(this.#mask(d.message.slice(0, MAX_LINE * 16)), MAX_LINE)
      }`;
      return text.length > MAX_LINE ? `${text.slice(0, MAX_LINE - 1)}…` : text;
    });
    if (fresh.length > MAX_SHOWN) lines.push(`… and ${fresh.length - MAX_SHOWN} more`);
    const errors = fresh.filter((d) => d.severity === "error").length;
    const count = errors > 0 ? `${errors} new error${errors === 1 ? "" : "s"}` : "new findings";
    return this.#mask(`${head}: ${count}; fix them before going on:\n${lines.join("\n")}`);
  }

  #once(checker: Pick<Checker, "name">, why: string): string | undefined {
    const text = this.#mask(
      `Diagnostics (${checker.name}) unavailable: ${
        plainLine(this.#mask(why.slice(0, MAX_WHY * 16)), MAX_WHY)
      }`,
    );
    if (this.#said.has(text)) return undefined;
    this.#said.add(text);
    return text;
  }
}

/**
 * `name` in double quotes for the head of a note, every character that could pass for a line
 * break or hide or reorder text (C1 controls, U+2028, bidi controls) escaped as in
 * {@linkcode quotedName}: JSON's own quoting escapes only C0 controls.
 */
function quotedHead(name: string): string {
  const quoted = quotedName(name);
  return quoted === name ? JSON.stringify(name) : quoted;
}

/** What a launch shows its process: its program, arguments (bubblewrap's binds) and environment. */
function viewOf(launch: BackgroundLaunch): string {
  return JSON.stringify([launch.program, launch.args, launch.env]);
}

/**
 * The findings of `found` that the last check's (`before`, their keys) did not hold, as many
 * times as they occur more often now. Counted, not searched: a file can make tens of thousands
 * of findings, and a search of the last ones for each held tern's thread for minutes; each of
 * `before` is read once.
 */
export function freshFindings(
  before: readonly string[],
  found: readonly Diagnostic[],
): Diagnostic[] {
  const left = new Map<string, number>();
  for (const known of before) left.set(known, (left.get(known) ?? 0) + 1);
  return found.filter((d) => {
    const count = left.get(key(d)) ?? 0;
    if (count === 0) return true;
    left.set(key(d), count - 1);
    return false;
  });
}

/** What makes two findings the same finding: their severity and message, not their line. */
export function key(d: Diagnostic): string {
  return `${d.severity}|${d.message}`;
}

function rank(d: Diagnostic): number {
  return d.severity === "error" ? 0 : d.severity === "warning" ? 1 : 2;
}
