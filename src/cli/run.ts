/** `tern run "task"`: one turn, streamed to the terminal or as JSON, then exit. */
import type { ConfigFlags } from "../config/mod.ts";
import { jsonForTerminal } from "../core/terminal_text.ts";
import { warningLine } from "../core/warnings.ts";
import type { AgentEvent, EmitFn, HostFileNotes } from "../core/events.ts";
import type { TurnResult } from "../agent/loop.ts";
import type { Provider } from "../llm/types.ts";
import type { AgentSandbox } from "../harness/agent_sandbox.ts";
import { openAgentSession, rememberedFacts } from "../harness/agent_session.ts";
import { checkSandboxConfig } from "../harness/sandbox_config.ts";
import { expandInput } from "../harness/resource_input.ts";
import type { TurnConfig } from "../harness/models.ts";
import type { OutputFormat } from "./args.ts";
import { lazyTerminalPerson } from "./terminal_person.ts";
import { exitCodeFor } from "./exit_codes.ts";
import { listenForInterrupts } from "./interrupts.ts";
import { themeFor } from "../tui/theme.ts";
import type { Session } from "../session/session.ts";
import type { SessionChoice } from "../harness/run_session.ts";
import { createTextRenderer } from "./output/text.ts";
import { Conversation, type TurnOptions } from "../harness/conversation.ts";
import {
  colorWanted,
  processWriters,
  readEnv,
  resolveWorkspace,
  shellSourceEnv,
} from "./process_env.ts";

export interface RunFlags {
  cwd: string;
  output: OutputFormat;
  /** Text output: the answer unsanitized (`--raw`). */
  raw?: boolean;
  config: ConfigFlags;
  /** Continue the newest session here, or resume a chosen one. */
  session?: SessionChoice;
  /** `--skill`: the skill whose instructions come before the task. */
  skill?: string;
  /** `--image`: workspace image files that go with the task. */
  images?: string[];
}

/** Runs `task` once and returns the exit code for its exit reason. */
export async function runOnce(task: string, flags: RunFlags): Promise<number> {
  // Listening from the start: a signal while the session opens stops the run before its turn,
  // and the session, with nothing in it, is discarded rather than left behind as a header.
  using interrupts = listenForInterrupts();
  const write = processWriters();
  const text = flags.output === "text";
  const facts: TurnFacts = {};
  const agent = await openAgentSession({
    workspace: resolveWorkspace(flags.cwd),
    flags: flags.config,
    session: flags.session,
    emit: createEmitter(flags.output, write, flags.raw === true, facts),
    person: text
      ? lazyTerminalPerson({
        workspace: resolveWorkspace(flags.cwd),
        // Asked only during a turn, once the session is open.
        readRefusal: () => agent.conversation.readRefusal(),
      })
      : undefined,
    warn: (text) => write.err(`tern: warning: ${warningLine(text)}\n`),
    onSandboxOpen: text ? unconfinedWarning(write) : undefined,
    memory: true,
    // tern run exits first: a due consolidation is left for the next interactive start.
    consolidation: "defer",
    subagents: true,
  });
  try {
    if (interrupts.signal.aborted) return interrupts.exitCode();
    const session = agent.session;
    // What loading a damaged session skipped, in every output mode: on stderr, so stdout stays
    // JSON; the event stream is what the agent does, and rpc and acp log these to stderr too.
    for (const warning of session.warnings) write.err(`tern: ${warningLine(warning)}\n`);
    // `/template args`, `/skill:name args` and --skill become the message the model gets.
    const resources = await agent.conversation.resources();
    const message = await expandInput(task, resources, flags.skill);
    const images = flags.images === undefined
      ? undefined
      : await (await import("./run_images.ts")).attachImages(
        agent.conversation.workspace,
        agent.config,
        flags.images,
        // What the model's own tools may not read is not attached for it either.
        await (await import("../harness/read_guard.ts")).modelReadGuard({
          workspace: agent.conversation.workspace,
          ternHome: agent.config.ternHome,
          home: readEnv("HOME"),
          rules: agent.config.rules,
        }),
      );
    if (interrupts.signal.aborted) return interrupts.exitCode();
    const result = await turnWithOutput(agent.conversation, message, flags.output, write, facts, {
      resources,
      signal: interrupts.signal,
      // A template's or skill's text is the repository's, not the person's: the AUTO reviewer
      // judges calls against what was typed, and gets the rest only as context.
      ...(message === task ? {} : { goal: task }),
      ...(images === undefined ? {} : { images }),
    });
    if (text) {
      write.err(`tern: session ${session.id.slice(0, 8)} (continue it with tern run -c "…")\n`);
    }
    return result.exitReason === "CANCELLED"
      ? interrupts.exitCode()
      : exitCodeFor(result.exitReason);
  } finally {
    // A signal during the close cuts its SessionEnd hooks short; after one that stopped the
    // turn, they run (bounded), and a second exits at once.
    await agent.close(interrupts.signal.aborted ? undefined : interrupts.signal);
  }
}

export interface TaskConversationOptions {
  workspace: string;
  config: TurnConfig;
  provider: Provider;
  /** The session the turns append to (the caller closes it). */
  session: Session;
  /** Where the text output goes: the tool lines to `err`, the answer to `out`. */
  write: { out: (text: string) => void; err: (text: string) => void };
  /** `write` goes to a terminal: lines are cut to its width and coloured (unless NO_COLOR). */
  terminal: boolean;
  /** The environment shell commands draw their allowlisted variables from. */
  env?: Readonly<Record<string, string>>;
}

/**
 * A conversation with an already built provider and no MCP servers (`tern demo`), its turns
 * shown as text; the caller runs turns or a plan in it, then closes it.
 */
export async function openTaskConversation(
  options: TaskConversationOptions,
): Promise<Conversation> {
  const { workspace, config, write, session } = options;
  // The remembered facts are read while the sandbox settings are checked.
  const [rules, memory] = await Promise.all([
    checkSandboxConfig(config, workspace, readEnv("HOME")),
    rememberedFacts(config, workspace),
  ]);
  for (const warning of session.warnings) write.err(`tern: ${warningLine(warning)}\n`);
  return new Conversation({
    workspace,
    config,
    provider: options.provider,
    session,
    rules,
    emit: createTextRenderer({
      ...write,
      terminal: options.terminal,
      columns: consoleColumns,
      outTerminal: options.terminal,
      style: themeFor(colorWanted(options.terminal)),
    }),
    env: options.env ?? shellSourceEnv(),
    home: readEnv("HOME"),
    facts: () => memory,
    onSandboxOpen: unconfinedWarning(write),
  });
}

/** Commands that would run unconfined are each reviewed; says so once, up front. */
function unconfinedWarning(write: Writers): (sandbox: AgentSandbox) => void {
  return (sandbox) => {
    if (sandbox.runtime.shellKind === "unavailable") {
      write.err(`tern: warning: ${warningLine(sandbox.runtime.shellNote ?? "")}\n`);
    }
  };
}

type Writers = { out: (text: string) => void; err: (text: string) => void };

/**
 * What the JSON result takes from the turn's events: its changes to host-run files, and those
 * its background processes made after its end.
 */
interface TurnFacts {
  hostFiles?: HostFileNotes;
}

/** Runs one turn of `conversation`, `options.signal` cancelling it; with JSON output, prints the result. */
async function turnWithOutput(
  conversation: Conversation,
  task: string,
  output: OutputFormat,
  write: Writers,
  facts: TurnFacts,
  options: TurnOptions & { signal: AbortSignal },
): Promise<TurnResult> {
  const session = conversation.session;
  const result = await conversation.turn(task, options);
  // The run ends here: what its background processes changed after the turn's end is told
  // before the summary, not after it (or never).
  await conversation.stopBackground();
  if (output === "json") {
    const { exitReason, text, rounds, toolCalls, usage, cost, saved, error } = result;
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
        saved,
        error,
        session: session.id,
        sessionPath: session.path,
        sessionUsage: total.usage,
        sessionCost: total.cost,
        sessionSaved: total.saved,
        audit,
        ...(facts.hostFiles === undefined ? {} : { hostFiles: facts.hostFiles }),
      })) + "\n",
    );
  }
  return result;
}

function createEmitter(
  output: OutputFormat,
  write: { out: (text: string) => void; err: (text: string) => void },
  raw: boolean,
  facts: TurnFacts,
): EmitFn {
  if (output === "stream-json") {
    return (event: AgentEvent) => write.out(jsonForTerminal(JSON.stringify(event)) + "\n");
  }
  if (output === "json") {
    return (event) => {
      if (event.type === "turn_end" || event.type === "background_host_files") {
        if (event.hostFiles) facts.hostFiles = [...facts.hostFiles ?? [], ...event.hostFiles];
      }
    };
  }
  return createTextRenderer({
    ...write,
    raw,
    terminal: Deno.stderr.isTerminal(),
    columns: consoleColumns,
    outTerminal: Deno.stdout.isTerminal(),
    markdown: !raw && Deno.stdout.isTerminal()
      ? {
        width: consoleColumns,
        theme: themeFor(colorWanted(true)),
      }
      : undefined,
    style: themeFor(colorWanted(Deno.stderr.isTerminal())),
  });
}

/** The terminal's width in cells; 80 when it cannot be read. */
function consoleColumns(): number {
  try {
    return Deno.consoleSize().columns;
  } catch {
    return 80;
  }
}
