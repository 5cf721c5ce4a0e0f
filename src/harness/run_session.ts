/**
 * The session a run writes to: a new one, the newest of this directory (`--continue`) or a
 * chosen one (`--resume <id|path>`), and the settings a resumed session brings back.
 */
import { type ConfigSource, isFlagSource, type TernConfig } from "../config/mod.ts";
import type { TernError } from "../core/errors.ts";
import { BUILTIN_PROFILES } from "../sandbox/profiles.ts";
import { parseSessionHeader } from "../session/load.ts";
import { checkOwnSessionFile, findSession, latestSession } from "../session/paths.ts";
import type { ReplayState } from "../session/replay.ts";
import { Session } from "../session/session.ts";
import type { SessionHeader } from "../session/types.ts";
import { VERSION } from "../version.ts";
import { SessionChoiceError } from "./errors.ts";

/** Which session to write to: at most one of the two. */
export interface SessionChoice {
  /** Continue the newest session of the workspace. */
  continue?: boolean;
  /** Resume this session (id, id prefix or path); "" asks for a picker. */
  resume?: string;
  /** Continue from this entry of the continued or resumed session (a new branch). */
  from?: string;
  /** A new session with this id and parent link (a subagent's); not with the others. */
  create?: { id: string; subagentOf: NonNullable<SessionHeader["subagentOf"]> };
}

/**
 * Opens (and locks) the session the run appends to.
 * @throws {SessionChoiceError} when there is nothing to continue, the session is unknown,
 * held by another process, or belongs to another directory.
 */
export async function openRunSession(
  choice: SessionChoice,
  where: { ternHome: string; workspace: string; serverChosenBy?: string },
): Promise<Session> {
  const { ternHome, workspace, serverChosenBy } = where;
  if (choice.continue && choice.resume !== undefined) {
    throw usage("--continue and --resume cannot be used together: pick one");
  }
  let path: string | undefined;
  if (choice.resume !== undefined) {
    if (choice.resume.trim() === "") {
      throw usage(
        "--resume needs a session id or path here (the picker is in the interactive UI): " +
          "list them with `tern sessions list`",
      );
    }
    path = await findSession(ternHome, choice.resume, workspace);
  } else if (choice.continue) {
    path = await latestSession(ternHome, workspace);
    if (path === undefined) {
      throw usage(
        `There is no session to continue in "${workspace}" yet: leave out -c (--continue) to ` +
          "start a new one",
      );
    }
  }
  if (path === undefined) {
    if (choice.from !== undefined) {
      throw usage("--from names an entry of an existing session: add --continue or --resume <id>");
    }
    return await Session.create(ternHome, {
      cwd: workspace,
      ternVersion: VERSION,
      ...(serverChosenBy === undefined ? {} : { serverChosenBy }),
      ...choice.create,
    });
  }
  const session = await openSessionHere(path, workspace, ternHome);
  if (choice.from !== undefined) {
    try {
      const { moveLeaf } = await import("../session/branch.ts");
      moveLeaf(session, choice.from);
    } catch (error) {
      session.close();
      throw error;
    }
  }
  return session;
}

/**
 * Opens (and locks) the session file at `path` to continue it in `workspace`: `--resume`,
 * `--continue` and the interactive `/resume` all open a session this way. A session of another
 * directory, or a file that is not one of tern's own sessions under `ternHome`, is refused
 * before it is opened, so nothing is written to it.
 * @throws {SessionChoiceError} when the session belongs to another directory, a
 * SessionFileError for a file that is not tern's own session.
 */
export async function openSessionHere(
  path: string,
  workspace: string,
  ternHome: string,
): Promise<Session> {
  checkOwnSessionFile(ternHome, path);
  const header = await firstLineHeader(path);
  if (header !== undefined) {
    checkSessionWorkspace(header, workspace);
    checkNotSubagent(header);
  }
  const session = await Session.open(path);
  try {
    checkSessionWorkspace(session.header, workspace);
    checkNotSubagent(session.header);
  } catch (error) {
    session.close();
    throw error;
  }
  return session;
}

/**
 * Refuses a session that belongs to another directory: its turns would run in this one, and its
 * checkpoints would later be rewound onto the wrong files.
 * @throws {SessionChoiceError} when `header.cwd` is not `workspace`.
 */
export function checkSessionWorkspace(
  header: Pick<SessionHeader, "id" | "cwd">,
  workspace: string,
): void {
  if (header.cwd === workspace) return;
  const { id, cwd } = header;
  throw usage(
    `Session "${id}" belongs to "${cwd}", not "${workspace}": run it there ` +
      `(tern -C ${cwd} run --resume ${id} …)`,
  );
}

/**
 * Refuses a subagent's session (`tern run -c` never picks one either): it holds the approvals and
 * grants its parent handed it for that one run, which going on with it would bring back.
 * @throws {SessionChoiceError} naming the parent's session, and the fork that keeps the
 * conversation without them.
 */
function checkNotSubagent(header: Pick<SessionHeader, "id" | "subagentOf">): void {
  const parent = header.subagentOf;
  if (parent === undefined) return;
  throw usage(
    `Session "${header.id}" is subagent ${JSON.stringify(parent.taskName)}'s, of session ` +
      `"${parent.sessionId}": it holds what its parent allowed for that run alone. Go on with ` +
      `the parent (tern run --resume ${parent.sessionId} …), or fork it (tern sessions fork ` +
      `${header.id}) to keep its conversation without them`,
  );
}

/**
 * The project file that chose the model server (`serverChosenBy`), as a session header records
 * it: `project:<path>` or `dotenv:<path>`; undefined for the person's own server.
 */
export function serverChooser(source: ConfigSource | undefined): string | undefined {
  if (source === undefined || !("file" in source)) return undefined;
  return `${source.layer}:${source.file}`;
}

/**
 * Refuses to go on with a session whose conversation so far went to the person's own model
 * server (or one another project file chose) when this run's server is chosen by a project's
 * files: that server would get the whole conversation, and what of the person's it holds (the
 * remembered facts sent with their messages, their skills read into it). The person can send it
 * there anyway by giving the server themselves (`--base-url`), which makes it theirs.
 * @throws {SessionChoiceError} naming the file that chose the server and how to go on.
 */
export function checkSessionServer(
  session: { header: Pick<SessionHeader, "id" | "serverChosenBy">; hasHistory: boolean },
  chooser: ConfigSource | undefined,
): void {
  const now = serverChooser(chooser);
  if (now === undefined || !session.hasHistory || session.header.serverChosenBy === now) return;
  const file = now.slice(now.indexOf(":") + 1);
  const before = session.header.serverChosenBy === undefined
    ? "your own model server"
    : `a server another file chose (${session.header.serverChosenBy})`;
  throw usage(
    `Session "${session.header.id}" went on with ${before}, and this run's server is chosen by ` +
      `"${file}": it would get the session's whole conversation, with your remembered facts and ` +
      "skills in it. Start a new session, or give the server yourself (--base-url) to send " +
      "it there anyway",
  );
}

/** Bytes of a session file read for its header line, at most (headers are a few hundred). */
const HEADER_LIMIT = 64 * 1024;

/**
 * The header on the first line of `path`; undefined when there is none or `path` is no regular
 * file (opening it says why).
 */
async function firstLineHeader(path: string): Promise<SessionHeader | undefined> {
  const buffer = new Uint8Array(HEADER_LIMIT);
  let filled = 0;
  try {
    // A FIFO would never answer the read.
    if (!(await Deno.lstat(path)).isFile) return undefined;
    using file = await Deno.open(path);
    while (filled < buffer.length) {
      const read = await file.read(buffer.subarray(filled));
      if (read === null) break;
      filled += read;
      if (buffer.subarray(filled - read, filled).includes(10)) break;
    }
  } catch {
    return undefined;
  }
  const end = buffer.subarray(0, filled).indexOf(10);
  const line = new TextDecoder().decode(buffer.subarray(0, end === -1 ? filled : end));
  try {
    return parseSessionHeader(line, path);
  } catch {
    return undefined;
  }
}

/** Settings a session can bring back on resume. */
type RestoredKey = "model" | "mode" | "profile" | "thinking" | "provider";

/** The name a run without a named provider records; not a provider one can choose. */
export const UNNAMED_PROVIDER = "openai-compatible";

/** A resumed session's settings applied to a run's, and what the person is told about them. */
export interface RestoredSettings<C> {
  config: C;
  /**
   * One sentence for each review mode or profile the session brought back, and each one it
   * recorded that this run keeps out because it allows more.
   */
  notes: string[];
}

/**
 * `config` (this run's settings: flags, environment, config files, defaults) with what the
 * resumed session last chose, by this precedence:
 * - the model (with its provider) and the thinking level: a flag (or `/model` in the session)
 *   wins; otherwise the session's. A `--provider` or `--model` flag drops the session's pair:
 *   they belong together.
 * - the review mode and the sandbox profile: a flag (or `/mode`, `/profile`) wins; otherwise
 *   the session's where it allows no more than this run's (`allowsNoMore`), and this run's
 *   where the session's would allow more. Resuming never widens what tern may do.
 */
export function restoreSessionSettings<C extends Pick<TernConfig, RestoredKey>>(
  config: C,
  sources: Readonly<Record<string, ConfigSource>>,
  state: ReplayState,
): RestoredSettings<C> {
  const next = { ...config };
  const notes: string[] = [];
  const fromFlag = (key: RestoredKey) => isFlagSource(sources[key]);
  if (state.model !== undefined && !fromFlag("model") && !fromFlag("provider")) {
    next.model = state.model;
    if (state.provider !== undefined && state.provider !== UNNAMED_PROVIDER) {
      next.provider = state.provider;
    }
  }
  if (isThinking(state.thinking) && !fromFlag("thinking")) next.thinking = state.thinking;
  const mode = isMode(state.mode) ? state.mode : undefined;
  next.mode = noWider("mode", mode, config.mode, fromFlag("mode"), notes);
  next.profile = noWider("profile", state.profile, config.profile, fromFlag("profile"), notes);
  return { config: next, notes };
}

/**
 * The session's `recorded` mode or profile where it allows no more than the run's `own`, with a
 * note for the person; `own` when the person chose it for this run (`chosen`) or nothing was
 * recorded.
 */
function noWider<T extends string>(
  key: "mode" | "profile",
  recorded: T | undefined,
  own: T,
  chosen: boolean,
  notes: string[],
): T {
  if (recorded === undefined || recorded === own || chosen) return own;
  if (allowsNoMore(key, recorded, own)) {
    notes.push(`Restored the session's ${key} "${recorded}" (this run's is "${own}")`);
    return recorded;
  }
  notes.push(
    `Kept ${key} "${own}": the session ran with ${key} "${recorded}", which allows more; ` +
      `to use it, pass --${key} ${recorded}`,
  );
  return own;
}

/** `restoreSessionSettings()`'s config alone. */
export function applySessionSettings<C extends Pick<TernConfig, RestoredKey>>(
  config: C,
  sources: Readonly<Record<string, ConfigSource>>,
  state: ReplayState,
): C {
  return restoreSessionSettings(config, sources, state).config;
}

/** The review modes, from the one that lets the fewest calls through unreviewed to the most. */
const MODES: readonly string[] = ["ask", "auto", "bypass"];

/**
 * Whether review mode or sandbox profile `value` allows no more than `than`: modes and built-in
 * profiles by their order, least to most permissive; `:danger-full-access` allows everything.
 * Two different custom profiles, or a custom and a built-in one, are not compared: false.
 */
export function allowsNoMore(key: "mode" | "profile", value: string, than: string): boolean {
  if (value === than) return true;
  if (key === "profile" && than === ":danger-full-access") return true;
  const order: readonly string[] = key === "mode" ? MODES : BUILTIN_PROFILES;
  const [rank, limit] = [order.indexOf(value), order.indexOf(than)];
  return rank !== -1 && limit !== -1 && rank <= limit;
}

function isMode(mode: string | undefined): mode is TernConfig["mode"] {
  return mode === "ask" || mode === "auto" || mode === "bypass";
}

function isThinking(level: string | undefined): level is TernConfig["thinking"] {
  return level === "off" || level === "low" || level === "medium" || level === "high";
}

/** Writes the settings the turn runs with where they differ from the session's last ones. */
export function recordSettings(
  session: Session,
  state: ReplayState,
  config: Pick<TernConfig, "model" | "mode" | "profile" | "thinking" | "provider">,
): void {
  if (state.model !== config.model || state.provider !== config.provider) {
    session.append(
      config.provider === undefined
        ? { type: "model", model: config.model }
        : { type: "model", model: config.model, provider: config.provider },
    );
  }
  if (state.thinking !== config.thinking) {
    session.append({ type: "thinking", level: config.thinking });
  }
  if (state.mode !== config.mode) session.append({ type: "mode", mode: config.mode });
  if (state.profile !== config.profile) {
    session.append({ type: "profile", profile: config.profile });
  }
}

function usage(message: string): TernError {
  return new SessionChoiceError(message);
}
