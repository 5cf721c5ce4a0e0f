/**
 * The session a run writes to: a new one, the newest of this directory (`--continue`) or a
 * chosen one (`--resume <id|path>`), and the settings a resumed session brings back.
 */
import { type ConfigSource, isFlagSource, type TernConfig } from "../config/mod.ts";
import type { TernError } from "../core/errors.ts";
import { findSession, latestSession } from "../session/paths.ts";
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
  where: { ternHome: string; workspace: string },
): Promise<Session> {
  const { ternHome, workspace } = where;
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
      throw usage(`There is no session to continue in "${workspace}": start one with tern run`);
    }
  }
  if (path === undefined) {
    if (choice.from !== undefined) {
      throw usage("--from names an entry of an existing session: add --continue or --resume <id>");
    }
    return await Session.create(ternHome, {
      cwd: workspace,
      ternVersion: VERSION,
      ...choice.create,
    });
  }
  const session = await Session.open(path);
  if (session.header.cwd !== workspace) {
    const { id, cwd } = session.header;
    session.close();
    throw usage(
      `Session "${id}" belongs to "${cwd}", not "${workspace}": run it there ` +
        `(tern -C ${cwd} run --resume ${id} …)`,
    );
  }
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

/** Settings a session can bring back on resume. */
type RestoredKey = "model" | "mode" | "profile" | "thinking" | "provider";

/** The name a run without a named provider records; not a provider one can choose. */
export const UNNAMED_PROVIDER = "openai-compatible";

/**
 * `config` with the model (and its provider), thinking level, review mode and profile the
 * resumed session last chose, except where the command line set them (an explicit flag wins).
 * A `--provider` or `--model` flag drops the session's pair: they belong together.
 */
export function applySessionSettings<C extends Pick<TernConfig, RestoredKey>>(
  config: C,
  sources: Readonly<Record<string, ConfigSource>>,
  state: ReplayState,
): C {
  const next = { ...config };
  const fromFlag = (key: RestoredKey) => isFlagSource(sources[key]);
  if (state.model !== undefined && !fromFlag("model") && !fromFlag("provider")) {
    next.model = state.model;
    if (state.provider !== undefined && state.provider !== UNNAMED_PROVIDER) {
      next.provider = state.provider;
    }
  }
  if (state.profile !== undefined && !fromFlag("profile")) next.profile = state.profile;
  if (isMode(state.mode) && !fromFlag("mode")) next.mode = state.mode;
  if (isThinking(state.thinking) && !fromFlag("thinking")) next.thinking = state.thinking;
  return next;
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
