/** `tern run "task"`: one turn, streamed to the terminal or as JSON, then exit. */
import type { ConfigFlags, TernConfig } from "../config/mod.ts";
import { isProjectSource, loadConfig } from "../config/mod.ts";
import { jsonForTerminal, terminalText } from "../core/terminal_text.ts";
import type { AgentEvent, EmitFn } from "../core/events.ts";
import type { ReplayState } from "../session/replay.ts";
import type { TurnResult } from "../agent/loop.ts";
import type { Provider } from "../llm/types.ts";
import type { ModelSetup } from "../llm/setup.ts";
import type { AskPerson } from "../sandbox/review.ts";
import type { SandboxConfig } from "./agent_sandbox.ts";
import { checkSandboxConfig } from "./sandbox_config.ts";
import type { OutputFormat } from "./args.ts";
import { terminalPerson } from "./ask_person.ts";
import { exitCodeFor } from "./exit_codes.ts";
import { styleFor } from "./output/style.ts";
import type { CompiledRule } from "../sandbox/rules.ts";
import { Session } from "../session/session.ts";
import { VERSION } from "../version.ts";
import { applySessionSettings, openRunSession, type SessionChoice } from "./run_session.ts";
import { createTextRenderer } from "./output/text.ts";
import { Conversation, type McpTools } from "./conversation.ts";
import { startMcpForRun } from "./mcp_setup.ts";
import { processWriters, readEnv, resolveWorkspace, shellSourceEnv } from "./process_env.ts";
import { phaseMark } from "../core/phase_marks.ts";

export { processWriters, readEnv, resolveWorkspace, shellSourceEnv };

export interface RunFlags {
  cwd: string;
  output: OutputFormat;
  /** Text output: the answer unsanitized (`--raw`). */
  raw?: boolean;
  config: ConfigFlags;
  /** Continue the newest session here, or resume a chosen one. */
  session?: SessionChoice;
}

/** Runs `task` once and returns the exit code for its exit reason. */
export async function runOnce(task: string, flags: RunFlags): Promise<number> {
  const workspace = resolveWorkspace(flags.cwd);
  const loaded = await loadConfig({ cwd: workspace, flags: flags.config });
  phaseMark("config");
  // MCP servers start now, in parallel with the session and the model setup.
  const mcpOpening = startMcpForRun({
    ternHome: loaded.config.ternHome,
    workspace,
    warn: (text) => processWriters().err(`tern: warning: ${terminalText(text)}\n`),
  });
  const closeMcp = () => mcpOpening.then((manager) => manager?.close());
  let session: Session;
  try {
    session = await openRunSession(flags.session ?? {}, {
      ternHome: loaded.config.ternHome,
      workspace,
    });
  } catch (error) {
    await closeMcp();
    throw error;
  }
  try {
    const state = session.state();
    const restored = applySessionSettings(loaded.config, loaded.sources, state);
    const { setup, config } = await connectModels(restored, loaded.sources, state);
    const mcp = await mcpOpening;
    const result = await runTaskWith({
      task,
      workspace,
      config,
      provider: setup.router,
      output: flags.output,
      raw: flags.raw,
      person: flags.output === "text" ? terminalPerson() : undefined,
      session,
      mcp,
    });
    if (flags.output === "text") {
      processWriters().err(
        `tern: session ${session.id.slice(0, 8)} (continue it with tern run -c "…")\n`,
      );
    }
    return exitCodeFor(result.exitReason);
  } finally {
    session.closeOrDiscard();
    await closeMcp();
  }
}

/** The settings a turn needs; the rest of the config is the provider's business. */
export type TurnConfig =
  & Pick<
    TernConfig,
    | "model"
    | "maxRounds"
    | "maxTokens"
    | "temperature"
    | "bashTimeoutMs"
    | "contextWindow"
    | "compactAt"
    | "toolResultChars"
    | "thinking"
  >
  & Partial<Pick<TernConfig, "provider">>
  & SandboxConfig;

export interface RunTaskOptions {
  task: string;
  workspace: string;
  config: TurnConfig;
  provider: Provider;
  output: OutputFormat;
  /** Text output: the answer goes to stdout unsanitized (`--raw`); stderr is always safe. */
  raw?: boolean;
  /** Where output goes; defaults to the process's stdout and stderr. */
  write?: { out: (text: string) => void; err: (text: string) => void };
  /** Asks a person to approve calls (ASK mode); absent when the run is not interactive. */
  person?: AskPerson;
  /** The environment shell commands draw their allowlisted variables from. */
  env?: Readonly<Record<string, string>>;
  /** The session to continue; a new one in the tern directory when absent (closed at the end). */
  session?: Session;
  /** MCP servers whose tools the agent may use. */
  mcp?: McpTools;
}

/** Runs one turn with an already built provider; shared by `run` and `demo`. */
export async function runTaskWith(options: RunTaskOptions): Promise<TurnResult> {
  const { workspace, config, output } = options;
  const write = options.write ?? processWriters();
  // The remembered facts are read while the sandbox settings are checked.
  const [rules, memory] = await Promise.all([
    checkSandboxConfig(config, workspace, readEnv("HOME")),
    rememberedFacts(config.ternHome, workspace),
  ]);
  const session = options.session ??
    await Session.create(config.ternHome, { cwd: workspace, ternVersion: VERSION });
  try {
    if (output === "text") {
      for (const warning of session.warnings) write.err(`tern: ${terminalText(warning)}\n`);
    }
    return await runInSession(options, session, { rules, memory }, write);
  } finally {
    if (options.session === undefined) session.closeOrDiscard();
  }
}

async function runInSession(
  options: RunTaskOptions,
  session: Session,
  prepared: { rules: CompiledRule[]; memory: string | undefined },
  write: { out: (text: string) => void; err: (text: string) => void },
): Promise<TurnResult> {
  const { rules, memory } = prepared;
  const { task, workspace, config, provider, output } = options;
  const conversation = new Conversation({
    workspace,
    config,
    provider,
    session,
    rules,
    emit: createEmitter(output, write, options.raw === true),
    person: options.person,
    env: options.env ?? shellSourceEnv(),
    home: readEnv("HOME"),
    memory: () => memory,
    mcp: options.mcp,
    onSandboxOpen: (sandbox) => {
      // Commands that would run unconfined are each reviewed; say so once, up front.
      if (sandbox.runtime.shellKind === "unavailable" && output === "text") {
        write.err(`tern: warning: ${terminalText(sandbox.runtime.shellNote ?? "")}\n`);
      }
    },
  });
  const controller = new AbortController();
  const onInterrupt = () => {
    // A second Ctrl-C while cancelling exits at once.
    if (controller.signal.aborted) Deno.exit(130);
    controller.abort();
  };
  Deno.addSignalListener("SIGINT", onInterrupt);
  try {
    const result = await conversation.turn(task, { signal: controller.signal });
    if (output === "json") {
      const { exitReason, text, rounds, toolCalls, usage, cost, error } = result;
      const audit = await conversation.sandbox()?.then(
        (sandbox) => sandbox.auditPath,
        () => undefined,
      );
      const total = session.state();
      write.out(
        jsonForTerminal(JSON.stringify({
          exitReason,
          text,
          rounds,
          toolCalls,
          usage,
          cost,
          error,
          session: session.id,
          sessionPath: session.path,
          sessionUsage: total.usage,
          sessionCost: total.cost,
          audit,
        })) + "\n",
      );
    }
    return result;
  } finally {
    Deno.removeSignalListener("SIGINT", onInterrupt);
    await conversation.close();
  }
}

/** The remembered facts as a system prompt section; none when the memory cannot be read. */
async function rememberedFacts(ternHome: string, workspace: string): Promise<string | undefined> {
  try {
    const { MemoryStore, memoryPromptSection } = await import("../memory/facts.ts");
    return memoryPromptSection((await MemoryStore.open(ternHome, workspace)).list());
  } catch {
    return undefined;
  }
}

function createEmitter(
  output: OutputFormat,
  write: { out: (text: string) => void; err: (text: string) => void },
  raw: boolean,
): EmitFn {
  if (output === "stream-json") {
    return (event: AgentEvent) => write.out(jsonForTerminal(JSON.stringify(event)) + "\n");
  }
  if (output === "json") return () => {};
  return createTextRenderer({
    ...write,
    raw,
    style: styleFor(Deno.stderr.isTerminal(), { NO_COLOR: readEnv("NO_COLOR") }),
  });
}

/**
 * Connects to the models `config` names: the router (main provider and fallbacks) and the
 * config the turn runs with, its model the one actually used and its context window from the
 * catalog unless configured. The provider modules load here, off the `--version` path.
 * @throws {TernError} (exit code 2) for an unknown provider or a missing key.
 */
export async function connectModels(
  config: TernConfig,
  sources: Readonly<Record<string, string>>,
  restored?: Pick<ReplayState, "model">,
): Promise<{ setup: ModelSetup; config: TernConfig }> {
  const { setupModels } = await import("../llm/setup.ts");
  // applySessionSettings() drops the session's model when --provider or --model was given.
  const fromFlag = sources.provider === "command line" || sources.model === "command line";
  const fromSession = restored?.model !== undefined && !fromFlag;
  const setup = setupModels(config, {
    model: sources.model !== "default" || fromSession,
    baseUrl: sources.baseUrl !== "default",
    ...(isProjectSource(sources.model) && !fromSession ? { projectModel: sources.model } : {}),
  });
  const { model, info, providerName } = setup.primary;
  const contextWindow = sources.contextWindow === "default"
    ? info.contextWindow
    : config.contextWindow;
  return { setup, config: { ...config, model, provider: providerName, contextWindow } };
}
