/**
 * `tern acp`: tern as an Agent Client Protocol agent on stdin/stdout (docs/acp.md), for
 * editors that drive coding agents. JSON-RPC framing, validation and method routing are the
 * official SDK's; each ACP session is one tern agent session (`AcpSession`).
 */
import {
  agent,
  type ClientCapabilities,
  MessageTooLargeError,
  methods,
  PROTOCOL_VERSION,
  RequestError,
} from "@agentclientprotocol/sdk";
import { checkFlags } from "../../config/mod.ts";
import { isAbsolute } from "../../core/path.ts";
import { terminalText } from "../../core/terminal_text.ts";
import { TurnBusyError } from "../../harness/turn_control.ts";
import { SessionRefError } from "../../session/errors.ts";
import { VERSION } from "../../version.ts";
import { UsageError } from "../errors.ts";
import { EXIT_FAILURE, EXIT_USAGE, exitCodeForError } from "../exit_codes.ts";
import { resolveWorkspace } from "../process_env.ts";
import type { RunFlags } from "../run.ts";
import { flowControlledStream } from "./flow.ts";
import { AcpSession } from "./session.ts";
import { onStopSignals } from "../interrupts.ts";

/**
 * The most sessions one connection holds open (each with its models, sandbox and MCP servers):
 * an editor that opens sessions without end would run tern out of memory. `session/close` frees
 * one.
 */
export const MAX_OPEN_SESSIONS = 32;

/** What a session id tern gives looks like (a UUID): `session/load` takes nothing else. */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/**
 * Serves ACP until the editor closes the connection; returns the exit code: 0, or 1 when the
 * connection broke off because the editor sent a message over the SDK's limit (32 MiB).
 */
export async function runAcp(flags: RunFlags): Promise<number> {
  const { continue: resume, resume: id, from } = flags.session ?? {};
  if (resume || id !== undefined || from !== undefined) {
    throw new UsageError(
      "tern acp opens the sessions the editor asks for (session/new, session/load): " +
        "--continue, --resume and --from do not apply",
    );
  }
  // Each session loads its config when the editor opens it: a bad option is told now, before
  // serving, not as an internal error of every session/new.
  checkFlags(flags.config ?? {});
  const log = (text: string) => console.error(`tern: ${terminalText(text)}`);
  const sessions = new Map<string, AcpSession>();
  /**
   * The sessions being opened, each settled once it is in `sessions`: one the editor asked for
   * just before it left is closed with the rest (its MCP servers kept tern running).
   */
  const opening = new Set<Promise<void>>();
  /** The sessions `session/close` is closing: tern exits only once they are closed. */
  const closingSessions = new Set<Promise<void>>();
  /** Set once the connection is closed: no session opens after that. */
  let closing = false;
  let capabilities: ClientCapabilities | undefined;
  const open = (
    cwd: string,
    choice: { resume?: string },
    client: Parameters<typeof AcpSession.open>[0]["client"],
  ): Promise<AcpSession> => {
    if (closing) {
      return Promise.reject(RequestError.internalError(undefined, "The connection is closed"));
    }
    if (sessions.size + opening.size >= MAX_OPEN_SESSIONS) {
      return Promise.reject(RequestError.invalidRequest(
        undefined,
        `Cannot open another session: ${MAX_OPEN_SESSIONS} are open on this connection; ` +
          "close one with session/close first",
      ));
    }
    const opened = openSession(cwd, choice, client).then((session) => {
      sessions.set(session.id, session);
      return session;
    });
    const settled = opened.then(() => {}, () => {});
    opening.add(settled);
    settled.then(() => opening.delete(settled));
    return opened;
  };
  const openSession = async (
    cwd: string,
    choice: { resume?: string },
    client: Parameters<typeof AcpSession.open>[0]["client"],
  ) => {
    const workspace = workspaceFor(cwd);
    try {
      return await AcpSession.open({
        workspace,
        flags: flags.config,
        choice,
        client,
        capabilities,
        log,
      });
    } catch (error) {
      // An id that names no session is ACP's own "not found", with no guess at another one.
      if (
        choice.resume !== undefined && error instanceof SessionRefError && !error.matches.length
      ) {
        throw RequestError.sessionNotFound(choice.resume);
      }
      throw requestError(error);
    }
  };
  // Once the sessions close (the editor gone), a signal cuts their SessionEnd hooks short.
  const cut = new AbortController();
  const app = agent({ name: "tern" })
    .onRequest(methods.agent.initialize, ({ params }) => {
      capabilities = params.clientCapabilities;
      return {
        protocolVersion: PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { embeddedContext: true },
          sessionCapabilities: { close: {} },
        },
        agentInfo: { name: "tern", version: VERSION },
        authMethods: [],
      };
    })
    .onRequest(methods.agent.session.new, async ({ params, client }) => {
      const session = await open(params.cwd, {}, client);
      return { sessionId: session.id };
    })
    .onRequest(methods.agent.session.load, async ({ params, client }) => {
      // An id this agent gave, never a path to open (tern's own sessions take one).
      if (!SESSION_ID.test(params.sessionId)) throw RequestError.sessionNotFound(params.sessionId);
      // Loading a session this connection holds opens it afresh (its file is locked meanwhile);
      // a load naming another directory is refused first, leaving the session and its turn be.
      const held = sessions.get(params.sessionId);
      if (held !== undefined && workspaceFor(params.cwd) !== held.workspace) {
        throw RequestError.invalidParams(
          undefined,
          `Session "${params.sessionId}" belongs to "${held.workspace}", not "${params.cwd}"`,
        );
      }
      await held?.close();
      // Another load of the same id may have opened it again meanwhile: that one stays held.
      if (sessions.get(params.sessionId) === held) sessions.delete(params.sessionId);
      const session = await open(params.cwd, { resume: params.sessionId }, client);
      await session.replay();
      return {};
    })
    .onRequest(methods.agent.session.prompt, async ({ params }) => {
      const session = sessions.get(params.sessionId);
      if (session === undefined) throw RequestError.sessionNotFound(params.sessionId);
      // As `tern run` refuses an empty task: a turn for nothing costs a model call and leaves an
      // empty message in the session, which a provider may refuse in every later turn.
      if (params.prompt.every((block) => block.type === "text" && block.text.trim() === "")) {
        throw RequestError.invalidParams(
          undefined,
          "The prompt is empty: say what tern should do",
        );
      }
      try {
        return await session.prompt(params.prompt);
      } catch (error) {
        if (error instanceof TurnBusyError) {
          throw RequestError.invalidRequest(undefined, error.message);
        }
        throw requestError(error);
      }
    })
    .onRequest(methods.agent.session.close, async ({ params }) => {
      const session = sessions.get(params.sessionId);
      if (session === undefined) throw RequestError.sessionNotFound(params.sessionId);
      // Gone from the map first: a prompt sent meanwhile finds no session, not a closing one.
      sessions.delete(params.sessionId);
      const closed = session.close(cut.signal);
      closingSessions.add(closed);
      try {
        await closed;
      } finally {
        closingSessions.delete(closed);
      }
      return {};
    })
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      sessions.get(params.sessionId)?.cancel();
    });
  // The SDK logs what the editor sent wrong (a response's id, as sent) on stderr itself: made
  // safe for a terminal, as tern's own lines are, so an editor's escape sequence is not obeyed.
  const consoleError = console.error;
  console.error = (...args: unknown[]) =>
    consoleError(...args.map((arg) => typeof arg === "string" ? terminalText(arg) : arg));
  const connection = app.connect(flowControlledStream(Deno.stdout.writable, Deno.stdin.readable));
  const onInterrupt = () => closing ? cut.abort() : connection.close();
  Deno.addSignalListener("SIGINT", onInterrupt);
  let code = 0;
  // SIGTERM and SIGHUP (how editors and supervisors stop an agent) close the connection as
  // Ctrl-C does: turns cancelled, sessions closed; the exit code says which signal came.
  using _stop = onStopSignals((signalCode) => {
    if (closing) cut.abort();
    code = signalCode;
    connection.close();
  });
  try {
    await connection.closed;
    // The SDK closes the connection on a message over its limit, and says so only here.
    const reason = connection.signal.reason;
    if (reason instanceof MessageTooLargeError) {
      log(
        `Cannot read a message from the editor: it is larger than ACP's limit of ` +
          `${reason.maxMessageBytes} bytes (${reason.maxMessageBytes / 2 ** 20} MiB); ` +
          "the connection is closed and running turns are cancelled",
      );
      code = EXIT_FAILURE;
    }
  } finally {
    console.error = consoleError;
    closing = true;
    await Promise.all(opening);
    await Promise.all([
      ...[...sessions.values()].map((session) => session.close(cut.signal)),
      ...[...closingSessions].map((closed) => closed.catch(() => {})),
    ]);
    Deno.removeSignalListener("SIGINT", onInterrupt);
  }
  return code;
}

/**
 * The workspace for the `cwd` the editor names: its real path.
 * @throws {RequestError} invalid params for a relative path or one tern cannot work in.
 */
function workspaceFor(cwd: string): string {
  // ACP requires an absolute cwd: a relative one would be taken from where tern started.
  if (!isAbsolute(cwd)) {
    throw RequestError.invalidParams(undefined, `cwd must be an absolute path, got "${cwd}"`);
  }
  try {
    return resolveWorkspace(cwd);
  } catch (error) {
    throw RequestError.invalidParams(undefined, messageOf(error));
  }
}

/**
 * The JSON-RPC error for `error`: invalid params for what the editor asked that cannot be done as
 * asked (what exits 2 on the command line: a session of another directory or held by another
 * load, bad settings, a prompt larger than the context window), else an internal error.
 */
function requestError(error: unknown): RequestError {
  return exitCodeForError(error) === EXIT_USAGE
    ? RequestError.invalidParams(undefined, messageOf(error))
    : RequestError.internalError(undefined, messageOf(error));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
