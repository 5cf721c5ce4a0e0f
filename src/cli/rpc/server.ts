/**
 * `tern rpc`: a long-lived agent session driven by JSON lines on stdin (docs/rpc.md). Stdout
 * carries only JSON lines (responses, agent events, permission requests); logs go to stderr.
 * It is one more user of the agent-session core: `openAgentSession()` opens it, `TurnControl`
 * runs, steers and aborts its turns.
 */
import { jsonForTerminal, terminalText } from "../../core/terminal_text.ts";
import { type AgentSession, openAgentSession } from "../../harness/agent_session.ts";
import { TurnControl } from "../../harness/turn_control.ts";
import { listSessions } from "../../session/paths.ts";
import { summarisedCount } from "../../session/types.ts";
import { VERSION } from "../../version.ts";
import { processWriters, resolveWorkspace } from "../process_env.ts";
import type { RunFlags } from "../run.ts";
import { readLines } from "./lines.ts";
import { PermissionDesk } from "./permissions.ts";
import { onStopSignals } from "../interrupts.ts";
import { LineOutput } from "./output.ts";
import {
  parseRpcLine,
  RPC_COMMANDS,
  RPC_MAX_LINE,
  RPC_PROTOCOL_VERSION,
  type RpcCommand,
  type RpcOutput,
  TOO_LONG,
} from "./protocol.ts";

/** Serves the protocol on stdin/stdout until stdin ends; returns the exit code. */
export async function runRpc(flags: RunFlags): Promise<number> {
  const write = processWriters();
  const stdout = new LineOutput(Deno.stdout);
  // Every line is one JSON value: model text is only ever a string inside it.
  const send = (output: RpcOutput) =>
    stdout.write(
      jsonForTerminal(JSON.stringify(output)) + "\n",
      output.type === "event" && output.event.type === "tool_update",
    );
  const log = (text: string) => write.err(`tern: ${terminalText(text)}\n`);
  const permissions = new PermissionDesk(send);
  const agent = await openAgentSession({
    workspace: resolveWorkspace(flags.cwd),
    flags: flags.config,
    session: flags.session,
    emit: (event) => send({ type: "event", event }),
    person: permissions.ask,
    warn: (text) => log(`warning: ${text}`),
    memory: true,
    consolidation: "defer",
  });
  const server = new RpcServer(agent, send, permissions);
  // Once the session closes, Ctrl-C or a supervisor's stop cuts its SessionEnd hooks short.
  const cut = new AbortController();
  let closing = false;
  const onInterrupt = () => closing ? cut.abort() : server.abort();
  Deno.addSignalListener("SIGINT", onInterrupt);
  // A supervisor or a closed terminal stops tern: the turn is cancelled and the session closed
  // before it exits (stdin, still open, cannot end the loop below).
  using _stop = onStopSignals(async (code) => {
    try {
      if (closing) cut.abort();
      closing = true;
      server.abort();
      permissions.close();
      await server.idle();
      await agent.close(cut.signal);
      // What the client has not read yet: a second of grace, then it is left.
      await Promise.race([stdout.drained(), new Promise((resolve) => setTimeout(resolve, 1_000))]);
    } catch (error) {
      log(`Cannot close in order: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      Deno.exit(code);
    }
  });
  try {
    for (const warning of agent.session.warnings) log(warning);
    send({
      type: "ready",
      protocol: RPC_PROTOCOL_VERSION,
      tern: VERSION,
      session: agent.session.id,
      commands: RPC_COMMANDS,
    });
    for await (const read of readLines(Deno.stdin.readable, RPC_MAX_LINE)) {
      // A client that sends but does not read is read no further until it reads: its answers
      // would otherwise wait in tern's memory without bound.
      await stdout.room();
      if ("tooLong" in read) {
        send({ type: "response", ok: false, error: TOO_LONG });
        continue;
      }
      if (read.line.trim() === "") continue;
      const parsed = parseRpcLine(read.line);
      if ("error" in parsed) {
        const { error, id, type } = parsed;
        send({
          type: "response",
          ...(id === undefined ? {} : { id }),
          command: type,
          ok: false,
          error,
        });
        continue;
      }
      await server.handle(parsed.command);
    }
    // Nobody can answer any more: what waits is denied, and the turn under way finishes.
    permissions.close();
    await server.idle();
    return 0;
  } finally {
    closing = true;
    await agent.close(cut.signal);
    Deno.removeSignalListener("SIGINT", onInterrupt);
    await stdout.drained();
  }
}

class RpcServer {
  readonly turns = new TurnControl();
  readonly #agent: AgentSession;
  readonly #send: (output: RpcOutput) => void;
  readonly #permissions: PermissionDesk;
  /** Aborts the compaction under way; undefined when none runs. */
  #compaction: AbortController | undefined;
  /** Settles when the latest compaction has ended (never rejects). */
  #compacted: Promise<unknown> = Promise.resolve();

  constructor(agent: AgentSession, send: (output: RpcOutput) => void, permissions: PermissionDesk) {
    this.#agent = agent;
    this.#send = send;
    this.#permissions = permissions;
  }

  /** Aborts the running turn or compaction; false when neither runs. */
  abort(): boolean {
    if (this.#compaction !== undefined && !this.#compaction.signal.aborted) {
      this.#compaction.abort();
      return true;
    }
    return this.turns.abort();
  }

  /** What runs that changes the session ("a turn", "a compaction"); undefined when nothing. */
  #busy(): string | undefined {
    if (this.turns.running) return "a turn";
    return this.#compaction === undefined ? undefined : "a compaction";
  }

  /** Resolves once no turn and no compaction runs (never rejects). */
  async idle(): Promise<void> {
    await this.turns.idle();
    await this.#compacted;
  }

  /**
   * Answers `command`. A prompt is answered when its turn ends, a compaction when it ends (the
   * next lines are read meanwhile, so an abort reaches either); the other commands before the
   * next line is read. Never throws.
   */
  async handle(command: RpcCommand): Promise<void> {
    const reply = (result: { data?: Record<string, unknown> } | { error: string }) => {
      const base = {
        type: "response" as const,
        ...(command.id === undefined ? {} : { id: command.id }),
        command: command.type,
      };
      this.#send(
        "error" in result ? { ...base, ok: false, error: result.error } : {
          ...base,
          ok: true,
          ...(result.data === undefined ? {} : { data: result.data }),
        },
      );
    };
    try {
      if (command.type === "prompt" || command.type === "compact") {
        const done = command.type === "prompt"
          ? this.#prompt(command.message)
          : this.#compact(command.focus);
        done.then((data) => reply({ data }), (error) => reply({ error: messageOf(error) }));
        return;
      }
      reply({ data: await this.#run(command) });
    } catch (error) {
      reply({ error: messageOf(error) });
    }
  }

  async #prompt(message: string): Promise<Record<string, unknown>> {
    // A compaction aborted but still unwinding is waited for, as an aborted turn is.
    if (this.#compaction?.signal.aborted) await this.#compacted;
    if (this.#compaction !== undefined) {
      throw new Error("Cannot prompt while a compaction runs: abort it first");
    }
    const conversation = this.#agent.conversation;
    const result = await this.turns.run(conversation, message);
    const { exitReason, text, rounds, toolCalls, usage, cost, error } = result;
    return {
      exitReason,
      text,
      rounds,
      toolCalls,
      usage,
      ...(cost === undefined ? {} : { cost }),
      ...(error === undefined ? {} : { error }),
      session: this.#agent.session.id,
    };
  }

  /**
   * Compacts the session (`compact`). An abort stops the PreCompact hooks and the summary
   * request, and nothing is written (`AgentSession.compact`).
   */
  async #compact(focus: string | undefined): Promise<Record<string, unknown>> {
    const busy = this.#busy();
    if (busy !== undefined) throw new Error(`Cannot compact while ${busy} runs: abort it first`);
    const abort = new AbortController();
    this.#compaction = abort;
    const done = this.#agent.compact({ focus, signal: abort.signal })
      .finally(() => this.#compaction = undefined);
    this.#compacted = done.catch(() => {});
    const entry = await done;
    if (entry === undefined) return { compacted: false };
    const { tokensBefore, tokensAfter, fallback } = entry;
    return {
      compacted: true,
      summarised: summarisedCount(entry),
      tokensBefore,
      tokensAfter,
      fallback: fallback === true,
    };
  }

  async #run(
    command: Exclude<RpcCommand, { type: "prompt" | "compact" }>,
  ): Promise<Record<string, unknown> | undefined> {
    const agent = this.#agent;
    switch (command.type) {
      case "steer":
        if (!this.turns.steer(command.message)) {
          throw new Error("No turn is running: send the message as a prompt");
        }
        return { queued: true };
      case "abort":
        return { aborted: this.abort() };
      case "answer_permission":
        this.#permissions.answer(command.requestId, command.answer);
        return undefined;
      case "get_state":
        return this.#state();
      case "list_sessions": {
        const { ternHome } = agent.config;
        const sessions = await listSessions(ternHome, command.all ? {} : { cwd: agent.workspace });
        // A session keeps a key unmasked when tern did not hold it then: masked for the keys it
        // holds now, as `tern sessions list` does.
        const mask = (text: string) => agent.conversation.maskKnownKeys(text);
        return {
          sessions: sessions.map((info) => ({
            id: info.id,
            path: info.path,
            cwd: info.cwd,
            created: info.created.toISOString(),
            modified: info.modified.toISOString(),
            entries: info.entries,
            ...(info.firstUserText === undefined
              ? {}
              : { firstUserText: mask(info.firstUserText) }),
            ...(info.parentId === undefined ? {} : { parentId: info.parentId }),
          })),
        };
      }
    }
    // The rest change the session or its settings: only between turns and compactions.
    const busy = this.#busy();
    if (busy !== undefined) {
      throw new Error(
        `Cannot ${command.type.replace("_", " ")} while ${busy} runs: abort it first`,
      );
    }
    switch (command.type) {
      case "fork": {
        const parent = agent.session.id;
        const { session, note } = await agent.fork(command.entryId);
        return { session: session.id, path: session.path, parent, ...(note ? { note } : {}) };
      }
      case "rewind":
        return await this.#rewind(command);
      case "set_model": {
        await agent.configure({
          model: command.model,
          ...(command.provider === undefined ? {} : { provider: command.provider }),
        });
        return { model: agent.config.model, provider: agent.config.provider };
      }
    }
  }

  /**
   * The rewind's plan (the diff and the conflicts, for the client's person); with `apply`, also
   * carried out. Conflicting files need a choice: they are never overwritten by default.
   */
  async #rewind(
    command: Extract<RpcCommand, { type: "rewind" }>,
  ): Promise<Record<string, unknown>> {
    const { previewRewind, confirmRewind } = await import("../../harness/rewind/agent_rewind.ts");
    const plan = await previewRewind(this.#agent, {
      target: command.target,
      scope: command.restore ?? "both",
    });
    const preview = {
      target: plan.target,
      restore: plan.scope,
      changes: plan.changes.map(({ path, status }) => ({ path, status })),
      patch: plan.patch,
      conflicts: plan.conflicts,
      unsaved: plan.unsaved,
      skipped: plan.skipped,
      ignored: plan.ignored,
      unheld: plan.unheld,
    };
    if (command.apply !== true) return { applied: false, ...preview };
    if (plan.conflicts.length > 0 && command.conflicts === undefined) {
      throw new Error(
        `Cannot rewind: ${plan.conflicts.length} file(s) changed outside tern since then ` +
          `(${plan.conflicts.slice(0, 5).join(", ")}): send "conflicts": "keep" or "overwrite"`,
      );
    }
    const result = await confirmRewind(this.#agent, plan, {
      overwrite: command.conflicts === "overwrite",
    });
    return { applied: true, ...preview, ...result };
  }

  #state(): Record<string, unknown> {
    const agent = this.#agent;
    const { config, session } = agent;
    const state = session.state();
    return {
      protocol: RPC_PROTOCOL_VERSION,
      workspace: agent.workspace,
      session: session.id,
      sessionPath: session.path,
      entries: session.entries.length,
      model: config.model,
      provider: config.provider,
      thinking: config.thinking,
      mode: config.mode,
      profile: config.profile,
      running: this.turns.running,
      pendingPermissions: this.#permissions.pending,
      usage: state.usage,
      ...(state.cost === undefined ? {} : { cost: state.cost }),
    };
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
