/**
 * A small Language Server Protocol client for diagnostics after edits: one server process
 * (started from a launch the sandbox built, see `SandboxRuntime.serverLaunch`) in a process
 * group of its own that dies with tern (see watched_process_group.ts), JSON-RPC over its stdin
 * and stdout (`vscode-jsonrpc`, loaded with this module), its stderr's tail kept for error
 * messages. It opens each changed file, sends the whole new text of each change and waits for
 * the server's `publishDiagnostics` of that version. It never sends a request that makes a
 * server run anything (no code actions, no commands). What passes between them is bounded:
 * each message it sends and the messages it leaves unread (message_bound.ts: a server past a
 * bound is stopped, and the check says why), and the findings kept, only of its open files.
 */
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import {
  createMessageConnection,
  type MessageConnection,
  StreamMessageReader,
} from "vscode-jsonrpc/node";
import { killSandboxInit, terminateProcessGroup } from "../../core/process_group.ts";
import { spawnWatchedProcessGroup } from "../../core/watched_process_group.ts";
import type { BackgroundLaunch } from "../../sandbox/background_launch.ts";
import type { Diagnostic } from "./parse.ts";
import { BoundedMessageWriter, messageBound } from "./message_bound.ts";

/** What a server is and how to speak to it (see servers.ts). */
export interface ServerSpec {
  /** How it is named in results (`deno lsp`). */
  name: string;
  /** Its program (an absolute path outside the workspace) and arguments. */
  argv: string[];
  /** The LSP language id of a file it checks. */
  languageId(file: string): string;
  initializationOptions?: unknown;
  /** The answer to `workspace/configuration` for one section (default null). */
  configuration?(section: string | undefined): unknown;
  /**
   * How long to wait for more publishes of a file after the first of a version, in
   * milliseconds (a server that publishes syntax and semantic findings apart); default 0.
   */
  settleMs?: number;
}

/** The most of a server's stderr kept for messages. */
const STDERR_TAIL = 2_000;
/** Files kept open in a server at most (each is read again before every check). */
const MAX_OPEN = 32;
/** How long `shutdown` may take before the group is stopped. */
const SHUTDOWN_MS = 1_000;

interface Waiter {
  version: number;
  resolve: (found: Diagnostic[]) => void;
  reject: (error: Error) => void;
  timer?: ReturnType<typeof setTimeout>;
}

/** One running language server. */
export class LanguageServer {
  readonly spec: ServerSpec;
  /** The host pid of its process group's leader (the sandbox's launcher). */
  readonly pid: number;
  /** Settles with why it ended, once it ended (or was closed). */
  readonly ended: Promise<string>;
  #child: Deno.ChildProcess;
  #connection: MessageConnection;
  #release: (() => void) | undefined;
  #versions = new Map<string, number>();
  /** The files open in the server, the least recently sent first, with the text it has. */
  #open = new Map<string, { file: string; text: string }>();
  #published = new Map<string, Diagnostic[]>();
  #waiters = new Map<string, Waiter[]>();
  #stderr = "";
  /** Why it was stopped for what it sent (see message_bound.ts). */
  #breach: string | undefined;
  #closing: Promise<void> | undefined;
  /** It runs in a sandbox of its own (bubblewrap's): see `close()`. */
  #confined: boolean;
  /** Reads an open file again (see `start()`'s `readFile`). */
  #readFile: (file: string) => string | undefined = () => undefined;

  private constructor(spec: ServerSpec, launch: BackgroundLaunch, child: Deno.ChildProcess) {
    this.spec = spec;
    this.#release = launch.release;
    this.#confined = launch.confined;
    this.#child = child;
    this.pid = this.#child.pid;
    const stderrRead = this.#keepStderr();
    const breach = (why: string) => {
      // Once: closing writes `shutdown`, which a full queue refuses again.
      if (this.#breach !== undefined) return;
      this.#breach = `${why}, so it was stopped`;
      void this.close();
    };
    this.#connection = createMessageConnection(
      new StreamMessageReader(
        Readable.fromWeb(this.#child.stdout.pipeThrough(messageBound(breach)) as never),
      ),
      new BoundedMessageWriter(Writable.fromWeb(this.#child.stdin as never), breach),
    );
    this.#connection.onNotification(
      "textDocument/publishDiagnostics",
      (params: PublishParams) => this.#onPublish(params),
    );
    this.#connection.onRequest((method: string, params: unknown) => {
      if (method === "workspace/configuration") {
        const items = (params as { items?: { section?: string }[] })?.items ?? [];
        return items.map((item) => spec.configuration?.(item.section) ?? null);
      }
      // Registrations, progress tokens, workspace folders: accepted, nothing done.
      return null;
    });
    this.#connection.onError(() => {});
    this.#connection.listen();
    this.ended = this.#child.status.then(async (status) => {
      // Its last words, unless something it left behind holds the pipe.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([stderrRead, new Promise((resolve) => timer = setTimeout(resolve, 500))]);
      clearTimeout(timer);
      this.#release?.();
      this.#release = undefined;
      this.#connection.dispose();
      const how = status.signal === null ? `exit code ${status.code}` : status.signal;
      const tail = this.#stderr.trim().split("\n").at(-1)?.slice(0, 300) ?? "";
      const reason = this.#breach ?? `it ended (${how})${tail === "" ? "" : `: ${tail}`}`;
      for (const list of this.#waiters.values()) {
        for (const waiter of list) waiter.reject(new Error(reason));
      }
      this.#waiters.clear();
      return reason;
    });
  }

  /**
   * Starts `spec`'s server from `launch` and initializes it for `workspace`. Throws `Error`
   * (`Cannot start "deno lsp": detail`) when it cannot start or does not answer `initialize`
   * within `timeoutMs`; the process is stopped then.
   */
  static async start(
    spec: ServerSpec,
    launch: BackgroundLaunch,
    options: {
      workspace: string;
      timeoutMs: number;
      /**
       * The text of a file as the model's own tools may read it; undefined when it is gone or
       * refused (a link a command made to a secret, a file too large): such a file is closed,
       * never sent.
       */
      readFile: (file: string) => string | undefined;
    },
  ): Promise<LanguageServer> {
    let server: LanguageServer;
    try {
      // Outside bubblewrap nothing else ends it with tern: the watchdog does (inside, it costs
      // a shell and changes nothing).
      const child = await spawnWatchedProcessGroup(launch.program, {
        args: launch.args,
        cwd: launch.cwd,
        env: launch.env,
      });
      server = new LanguageServer(spec, launch, child);
      server.#readFile = options.readFile;
    } catch (error) {
      launch.release?.();
      const detail = error instanceof Error ? error.message : String(error);
      throw new Error(`Cannot start "${spec.name}": ${detail}`);
    }
    const root = pathToFileURL(options.workspace).href;
    const initialize = server.#connection.sendRequest("initialize", {
      processId: null,
      rootUri: root,
      workspaceFolders: [{ uri: root, name: "workspace" }],
      capabilities: {
        textDocument: {
          publishDiagnostics: { versionSupport: true },
          synchronization: { didSave: false, dynamicRegistration: false },
        },
        workspace: { configuration: true, workspaceFolders: true },
      },
      initializationOptions: spec.initializationOptions ?? null,
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const failed = await Promise.race([
      initialize.then(() => undefined, (error) => `initialize failed: ${error?.message ?? error}`),
      server.ended,
      new Promise<string>((resolve) => {
        timer = setTimeout(
          () => resolve(`no answer to initialize within ${options.timeoutMs / 1000} s`),
          options.timeoutMs,
        );
      }),
    ]);
    clearTimeout(timer);
    if (failed !== undefined) {
      // A request fails when the connection closes, just before the process is seen to end:
      // how it ended says more.
      const ended = await Promise.race([
        server.ended,
        new Promise<undefined>((resolve) =>
          timer = setTimeout(() => resolve(undefined), SHUTDOWN_MS)
        ),
      ]);
      clearTimeout(timer);
      await server.close();
      if (ended !== undefined) throw new Error(`Cannot start "${spec.name}": ${ended}`);
      throw new Error(`Cannot start "${spec.name}": ${failed}`);
    }
    await server.#connection.sendNotification("initialized", {});
    return server;
  }

  /**
   * Tells the server `file` (absolute) now holds `text` and resolves with its diagnostics for
   * that version, once published. Not bounded in time: the caller races it against its own
   * bound. Throws when the server has ended or ends meanwhile (with how it ended).
   */
  async diagnose(file: string, text: string): Promise<Diagnostic[]> {
    if (this.#closing !== undefined) throw new Error(`"${this.spec.name}" is stopped`);
    const uri = pathToFileURL(file).href;
    // The files opened before may have changed since (a command wrote them): the server
    // would check this one against what it was told of them.
    this.#refresh(uri);
    const version = this.#send(uri, file, text);
    return await new Promise<Diagnostic[]>((resolve, reject) => {
      const list = this.#waiters.get(uri) ?? [];
      list.push({ version, resolve, reject });
      this.#waiters.set(uri, list);
    });
  }

  /** Tells the server `file` holds `text` (opens it, or changes it); returns the version. */
  #send(uri: string, file: string, text: string): number {
    // Versions only grow, across a close and a new open too: a late publish never passes for
    // a newer one.
    const version = (this.#versions.get(uri) ?? 0) + 1;
    this.#versions.set(uri, version);
    const known = this.#open.get(uri);
    this.#open.delete(uri);
    this.#open.set(uri, { file, text });
    if (known === undefined) {
      void this.#connection.sendNotification("textDocument/didOpen", {
        textDocument: { uri, languageId: this.spec.languageId(file), version, text },
      }).catch(() => {});
    } else {
      void this.#connection.sendNotification("textDocument/didChange", {
        textDocument: { uri, version },
        contentChanges: [{ text }],
      }).catch(() => {});
    }
    return version;
  }

  /**
   * Sends what changed on disk of the open files but `except`, closes those gone, and closes
   * the oldest beyond {@linkcode MAX_OPEN}.
   */
  #refresh(except: string): void {
    for (const [uri, { file, text }] of [...this.#open]) {
      if (uri === except) continue;
      const now = this.#readFile(file);
      if (now === text) continue;
      if (now === undefined) this.#close(uri);
      else this.#send(uri, file, now);
    }
    const excess = this.#open.size - MAX_OPEN;
    for (const uri of [...this.#open.keys()].filter((uri) => uri !== except).slice(0, excess)) {
      this.#close(uri);
    }
  }

  #close(uri: string): void {
    this.#open.delete(uri);
    this.#published.delete(uri);
    void this.#connection.sendNotification("textDocument/didClose", { textDocument: { uri } })
      .catch(() => {});
  }

  /**
   * Stops the server: `shutdown` and `exit` (bounded), then its whole process group.
   * Idempotent; never throws.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const bound = new Promise<void>((resolve) => timer = setTimeout(resolve, SHUTDOWN_MS));
      // A connection already disposed (the server ended) throws at once.
      const polite = (async () => {
        await this.#connection.sendRequest("shutdown");
        await this.#connection.sendNotification("exit");
      })().catch(() => {});
      await Promise.race([polite, bound, this.ended]);
      clearTimeout(timer);
      // A sandbox still setting up would outlive its bubblewrap: its init goes first.
      if (this.#confined) killSandboxInit(this.pid);
      await terminateProcessGroup(this.pid, this.#child.status, 200);
      await this.ended;
    })();
    return this.#closing;
  }

  #onPublish(params: PublishParams): void {
    let path: string;
    try {
      path = decodeURIComponent(new URL(params.uri).pathname);
    } catch {
      return;
    }
    const uri = pathToFileURL(path).href;
    // Findings of files it was not sent (a server can name any number of them) are not kept.
    if (!this.#open.has(uri)) return;
    // What the server sent is not checked by the connection: a list of objects is expected.
    const sent: unknown[] = Array.isArray(params.diagnostics) ? params.diagnostics : [];
    const diagnostics = sent.filter((d): d is LspDiagnostic => typeof d === "object" && d !== null);
    this.#published.set(uri, diagnostics.map((d) => toDiagnostic(path, d)));
    const list = this.#waiters.get(uri);
    if (list === undefined) return;
    for (const waiter of list) {
      // A publish names its version, or (a server without versions) came after the change.
      const current = typeof params.version !== "number" || params.version >= waiter.version;
      if (!current) continue;
      clearTimeout(waiter.timer);
      const settle = this.spec.settleMs ?? 0;
      const done = () => {
        const left = this.#waiters.get(uri)?.filter((w) => w !== waiter) ?? [];
        if (left.length === 0) this.#waiters.delete(uri);
        else this.#waiters.set(uri, left);
        waiter.resolve(this.#published.get(uri) ?? []);
      };
      if (settle === 0) done();
      else waiter.timer = setTimeout(done, settle);
    }
  }

  async #keepStderr(): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of this.#child.stderr) {
        this.#stderr = (this.#stderr + decoder.decode(chunk, { stream: true })).slice(
          -STDERR_TAIL,
        );
      }
    } catch {
      // Closed with the process.
    }
  }
}

interface PublishParams {
  uri: string;
  version?: number | null;
  diagnostics?: LspDiagnostic[];
}

interface LspDiagnostic {
  /** What the server sent, unchecked: see `position()`. */
  range?: { start?: { line?: unknown; character?: unknown } };
  severity?: number;
  code?: string | number;
  source?: string;
  message?: string;
}

/** An LSP diagnostic (0-based positions, severity 1–4) as a checker's (1-based). */
function toDiagnostic(path: string, d: LspDiagnostic): Diagnostic {
  const start = d.range?.start ?? {};
  const severity = d.severity === 2
    ? "warning"
    : d.severity === 3 || d.severity === 4
    ? "info"
    : "error";
  // TypeScript's numeric codes read as tsc prints them (TS2322), as the one-shot checkers say.
  const ts = typeof d.code === "number" && /^(deno-)?ts$|typescript/i.test(d.source ?? "");
  const code = d.code === undefined ? "" : `${ts ? "TS" : ""}${d.code}: `;
  return {
    path,
    line: position(start.line) + 1,
    column: position(start.character) + 1,
    severity,
    message: `${code}${d.message ?? ""}`,
  };
}

/**
 * A position the server sent, as a number: the JSON it sends may hold anything there (a string
 * with line breaks would become lines of the model's tool result), and what is not a
 * non-negative whole number counts as 0.
 */
function position(value: unknown): number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}
