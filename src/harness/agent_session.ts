/**
 * One agent session as a front end holds it: the config, the session file, the model router,
 * the MCP servers, the sandbox (inside the conversation) and the conversation, opened in one
 * order and closed in one order. `tern run` and `tern plan` open one; a subagent, a headless
 * child or an RPC server opens the same.
 */
import { type ConfigFlags, type ConfigSource, loadConfig, type TernConfig } from "../config/mod.ts";
import type { EmitFn } from "../core/events.ts";
import { phaseMark } from "../core/phase_marks.ts";
import type { Provider } from "../llm/types.ts";
import type { McpManager } from "../mcp/manager.ts";
import type { AskPerson } from "../sandbox/review.ts";
import type { Session } from "../session/session.ts";
import type { AgentSandbox } from "./agent_sandbox.ts";
import { Conversation } from "./conversation.ts";
import { readEnv, shellSourceEnv } from "./env.ts";
import { startMcpForRun } from "./mcp_setup.ts";
import { connectModels } from "./models.ts";
import { applySessionSettings, openRunSession, type SessionChoice } from "./run_session.ts";
import { checkSandboxConfig } from "./sandbox_config.ts";

export interface AgentSessionOptions {
  /** The workspace: an absolute real path (`resolveWorkspace`). */
  workspace: string;
  /** The command line's settings, above the config files and the environment. */
  flags: ConfigFlags;
  /** Continue the newest session here, or resume a chosen one; a new session when absent. */
  session?: SessionChoice;
  /** Receives every agent event of the conversation's turns. */
  emit: EmitFn;
  /** Asks a person to approve calls (ASK mode); absent when nobody can be asked. */
  person?: AskPerson;
  /** Told about an MCP config or server that is not used; the session goes on without it. */
  warn: (text: string) => void;
  /** Told once the sandbox is open (it opens while the first model request is in flight). */
  onSandboxOpen?: (sandbox: AgentSandbox) => void;
  /** Put the remembered facts in the system prompt (read once, as the session opens). */
  memory?: boolean;
}

/** What `openAgentSession()` assembled; `close()` takes it down. */
export interface AgentSessionParts {
  workspace: string;
  /** The settings the turns run with: the session's restored ones, the model actually used. */
  config: TernConfig;
  /** Where each setting came from. */
  sources: Readonly<Record<string, ConfigSource>>;
  session: Session;
  /** The main provider with its fallbacks. */
  router: Provider;
  /** The MCP servers, started; absent when none is configured or the config is bad. */
  mcp: McpManager | undefined;
  conversation: Conversation;
}

/** An open agent session: its parts, the preload hook and one way to close everything. */
export class AgentSession {
  #parts: AgentSessionParts;
  #closed = false;

  constructor(parts: AgentSessionParts) {
    this.#parts = parts;
  }

  get workspace(): string {
    return this.#parts.workspace;
  }

  get config(): TernConfig {
    return this.#parts.config;
  }

  get sources(): Readonly<Record<string, ConfigSource>> {
    return this.#parts.sources;
  }

  get session(): Session {
    return this.#parts.session;
  }

  get router(): Provider {
    return this.#parts.router;
  }

  get mcp(): McpManager | undefined {
    return this.#parts.mcp;
  }

  get conversation(): Conversation {
    return this.#parts.conversation;
  }

  /**
   * Loads the tool code and opens the sandbox now, in the background (a front end calls it
   * while the person types; every turn also does it once the model starts answering).
   */
  preload(): void {
    this.#parts.conversation.preload();
  }

  /**
   * Closes everything, in this order: the conversation (its sandbox, worker, temporary folder
   * and audit log), the session file (discarded when nothing was written), the MCP servers.
   * A second call does nothing.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const { conversation, session, mcp } = this.#parts;
    try {
      await conversation.close();
    } finally {
      session.closeOrDiscard();
      await mcp?.close();
    }
  }
}

/**
 * Opens an agent session: the config read, the MCP servers started (in parallel with the rest),
 * the session opened and its settings restored, the models connected, the sandbox settings
 * checked. The sandbox itself opens later (`preload()` or the first turn).
 * @throws {ConfigError} for bad settings, {SessionChoiceError} for a session that cannot be
 * used, {TernError} for an unknown provider or a missing key; nothing is left open then.
 */
export async function openAgentSession(options: AgentSessionOptions): Promise<AgentSession> {
  const { workspace } = options;
  const loaded = await loadConfig({ cwd: workspace, flags: options.flags });
  phaseMark("config");
  const ternHome = loaded.config.ternHome;
  // MCP servers start now, in parallel with the session and the model setup.
  const mcpOpening = startMcpForRun({ ternHome, workspace, warn: options.warn });
  let session: Session | undefined;
  try {
    session = await openRunSession(options.session ?? {}, { ternHome, workspace });
    const state = session.state();
    const restored = applySessionSettings(loaded.config, loaded.sources, state);
    const { setup, config } = await connectModels(restored, loaded.sources, state);
    const home = readEnv("HOME");
    // The remembered facts are read while the sandbox settings are checked.
    const [rules, memory] = await Promise.all([
      checkSandboxConfig(config, workspace, home),
      options.memory ? rememberedFacts(ternHome, workspace) : undefined,
    ]);
    const mcp = await mcpOpening;
    const conversation = new Conversation({
      workspace,
      config,
      provider: setup.router,
      session,
      rules,
      emit: options.emit,
      person: options.person,
      env: shellSourceEnv(),
      home,
      memory: () => memory,
      mcp,
      onSandboxOpen: options.onSandboxOpen,
    });
    return new AgentSession({
      workspace,
      config,
      sources: loaded.sources,
      session,
      router: setup.router,
      mcp,
      conversation,
    });
  } catch (error) {
    session?.closeOrDiscard();
    await mcpOpening.then((manager) => manager?.close());
    throw error;
  }
}

/** The remembered facts as a system prompt section; none when the memory cannot be read. */
export async function rememberedFacts(
  ternHome: string,
  workspace: string,
): Promise<string | undefined> {
  try {
    const { MemoryStore, memoryPromptSection } = await import("../memory/facts.ts");
    return memoryPromptSection((await MemoryStore.open(ternHome, workspace)).list());
  } catch {
    return undefined;
  }
}
