/**
 * `tern child`: the headless child protocol (docs/child-protocol.md). Reads one request line on
 * stdin, runs one turn in a new session linked to its parent, and writes only protocol lines
 * on stdout — events, escalations, then one final record. Everything else goes to stderr.
 */
import { terminalText } from "../core/terminal_text.ts";
import type { AgentEvent } from "../core/events.ts";
import type { ConfigFlags, ConfigSource } from "../config/mod.ts";
import { serverChooser } from "../harness/run_session.ts";
import { openAgentSession } from "../harness/agent_session.ts";
import type { AskPerson, PersonAnswer } from "../sandbox/review.ts";
import { lines } from "../harness/subagents/child_process.ts";
import {
  CHILD_BASE_TOOLS,
  CHILD_PROTOCOL_VERSION,
  type ChildFinal,
  type ChildLine,
  type ChildRequest,
  childRequestSchema,
  type ChildStatus,
  parentLineSchema,
  parseLine,
} from "../harness/subagents/protocol.ts";
import { resolveWorkspace } from "./process_env.ts";
import { phaseMark } from "../core/phase_marks.ts";
import { readEnv } from "../harness/env.ts";

const encoder = new TextEncoder();

/**
 * Runs the child protocol on this process's stdin and stdout, then exits the process (0 when a
 * final record was written for a run, 1 when the run failed to start, 2 for a bad request).
 */
export async function runChild(): Promise<number> {
  keepStdoutForProtocol();
  phaseMark("child_ready");
  // A pre-started child (the parent's idle one) loads what its run needs while it waits.
  const idle = readEnv("TERN_CHILD_IDLE") === "1";
  const warm = idle ? warmUp() : undefined;
  const input = lines(Deno.stdin.readable)[Symbol.asyncIterator]();
  const first = await input.next();
  if (first.done) {
    // An idle child whose parent ended (or went) without a task for it: nothing to say.
    if (idle) return 0;
    logError("no request on stdin");
    return 2;
  }
  await warm;
  let request: ChildRequest;
  try {
    request = parseLine(childRequestSchema, first.value, "the child request");
  } catch (error) {
    logError(error instanceof Error ? error.message : String(error));
    return 2;
  }
  phaseMark("child_request");
  // The parent's run cgroups: this run's commands join them (one cap for all its children).
  if (request.runCgroup !== undefined) {
    const { inheritRunCgroup } = await import("../sandbox/run_cgroup.ts");
    inheritRunCgroup(request.runCgroup);
  }
  const controller = new AbortController();
  const stop = () => controller.abort();
  // The turn ends at the time limit even when the parent is gone (killed, its own timer with
  // it): a run it left behind goes on only to record its outcome for the parent's -c.
  const deadline = setTimeout(() => controller.abort("timed_out"), request.timeoutMs);
  const parent = new ParentLink(request, input);
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
  const code = await runRequest(request, parent, controller.signal);
  clearTimeout(deadline);
  // The read of stdin (escalation answers) would keep the process alive until the parent
  // closes the pipe: the run is over, so the process is too.
  Deno.exit(code);
}

async function runRequest(
  request: ChildRequest,
  parent: ParentLink,
  signal: AbortSignal,
): Promise<number> {
  const identity = {
    taskName: request.taskName,
    agentId: request.agentId,
    childSessionId: request.childSessionId,
    runId: request.runId,
  };
  const fail = (error: string): ChildFinal => ({
    type: "final",
    version: CHILD_PROTOCOL_VERSION,
    ...identity,
    status: "failed",
    content: "",
    finalEntryId: null,
    error,
  });
  let agent;
  try {
    agent = await openAgentSession({
      workspace: resolveWorkspace(request.cwd),
      flags: childFlags(request),
      session: {
        create: {
          id: request.childSessionId,
          subagentOf: {
            sessionId: request.parentSession.id,
            path: request.parentSession.path,
            ...identity,
          },
        },
      },
      emit: (event: AgentEvent) =>
        parent.send({
          type: "event",
          version: CHILD_PROTOCOL_VERSION,
          runId: request.runId,
          event,
        }),
      person: parent.asker(),
      warn: (text) => logError(`warning: ${text}`),
      memory: false,
      // Its tools are built-ins only (spawn_agent names no MCP tool): no server starts for it.
      mcp: false,
      allowedTools: new Set([...CHILD_BASE_TOOLS, ...request.tools.allow]),
    });
  } catch (error) {
    parent.send(fail(error instanceof Error ? error.message : String(error)));
    return 1;
  }
  phaseMark("child_session");
  try {
    checkServer(request, agent.config.serverChosenBy);
    const session = agent.session;
    // The parent's session-wide approvals and grants: the child holds no more than these.
    for (const change of request.permissions.changes) {
      session.append({ type: "permission", change });
    }
    const result = await agent.conversation.turn(request.prompt, { signal, goal: request.goal });
    const final: ChildFinal = {
      type: "final",
      version: CHILD_PROTOCOL_VERSION,
      ...identity,
      status: signal.reason === "timed_out" ? "timed_out" : statusOf(result.exitReason),
      content: result.text,
      finalEntryId: session.leafId,
      ...(result.error === undefined ? {} : { error: result.error }),
    };
    // Recorded in the child's own session first: a parent that died meanwhile finds it there.
    session.append({ type: "subagent", data: { kind: "final", final } });
    parent.send(final);
    return 0;
  } catch (error) {
    parent.send(fail(error instanceof Error ? error.message : String(error)));
    return 1;
  } finally {
    parent.close();
    // A stop during the close cuts its SessionEnd hooks short (see `runOnce`).
    await agent.close(signal.aborted ? undefined : signal);
  }
}

/**
 * Refuses a model server the parent's does not go to: one the project's files chose now (a
 * `.env` a command wrote since the parent started) while the parent's is the person's own or
 * another file's. The child's conversation would go there, unseen (its notice is on stderr).
 * @throws {Error} naming the file, before anything is sent.
 */
function checkServer(request: ChildRequest, source: ConfigSource | undefined): void {
  const chooser = serverChooser(source);
  if (chooser === undefined || chooser === request.model.serverChosenBy) return;
  const file = chooser.slice(chooser.indexOf(":") + 1);
  throw new Error(
    `Cannot run subagent "${request.taskName}": "${file}" chooses its model server, not the ` +
      "one this session uses (a file written since the session started cannot send a " +
      "subagent's conversation elsewhere); remove the setting, or give the server yourself " +
      "(--base-url)",
  );
}

/** A request of the usual shape, parsed once by an idle child (never run). */
const WARM_REQUEST = {
  type: "request",
  version: CHILD_PROTOCOL_VERSION,
  taskName: "warm",
  agentId: "agent-00000000",
  childSessionId: "00000000-0000-4000-8000-000000000000",
  runId: "run-0000000000000000",
  parentSession: { id: "00000000-0000-4000-8000-000000000000", path: "/warm.jsonl" },
  prompt: "warm",
  cwd: "/",
  tools: { allow: ["read"] },
  permissions: {
    profile: ":read-only",
    noSandbox: false,
    parentMode: "ask",
    changes: [{ kind: "approval", key: "warm" }],
    autoNetwork: "never",
    autoAskRules: "person",
    escalationTimeoutMs: 1,
  },
  timeoutMs: 1,
  model: { model: "warm", thinking: "off", maxRounds: 1 },
};

/**
 * Loads the modules a run imports lazily (the models, the providers, the conversation), so
 * that a pre-started child has them when its request comes. Holds no setting and no grant:
 * those come with the request. Never throws (a module that fails to load fails the run
 * later, where its error is reported).
 */
async function warmUp(): Promise<void> {
  await Promise.all([
    // The session's parts (models, conversation, hooks, checkpoints) come in this one.
    import("../harness/session_parts.ts"),
    import("../llm/openai_chat.ts"),
    import("../llm/openai_responses.ts"),
    import("../llm/anthropic.ts"),
    import("../harness/rewind/shadow_store.ts"),
    import("../harness/resource_prompt.ts"),
    import("../memory/resources.ts"),
    import("../agent/request_permissions.ts"),
    import("../sandbox/rules.ts"),
    import("../sandbox/prewarm.ts"),
    import("../harness/agent_sandbox.ts"),
    import("../harness/agent_gate.ts"),
    import("../config/jsonc_file.ts"),
  ]).catch(() => {});
  // Deno loads fetch's code at its first use, and zod compiles a schema at its first parse:
  // both done once here, with a request that goes nowhere.
  void new Request("http://127.0.0.1/v1", { method: "POST", body: "{}" }).text().catch(() => {});
  childRequestSchema.safeParse(WARM_REQUEST);
  parentLineSchema.safeParse({
    type: "escalation_answer",
    version: 1,
    escalationId: "e",
    answer: "deny",
  });
  phaseMark("child_warm");
}

/** The settings the request carries, as command-line flags (above every config file). */
function childFlags(request: ChildRequest): ConfigFlags {
  const { model, permissions } = request;
  return {
    model: model.model,
    ...(model.provider === undefined ? {} : { provider: model.provider }),
    ...(model.baseUrl === undefined ? {} : { baseUrl: model.baseUrl }),
    ...(model.maxRounds === undefined ? {} : { maxRounds: String(model.maxRounds) }),
    thinking: model.thinking,
    mode: "auto",
    // A child reviews its calls in AUTO; who may widen its sandbox is who may widen its
    // parent's: nobody under BYPASS, the parent's person under ASK, under AUTO whoever the
    // parent's own autoNetwork names.
    autoNetwork: permissions.parentMode === "bypass"
      ? "never"
      : permissions.parentMode === "ask"
      ? "person"
      : permissions.autoNetwork,
    // Who answers the person's "ask" rules: the person under an ASK parent (who approved
    // handing over tools that change things, not their own questions), else whoever the
    // parent's autoAskRules names (a BYPASS parent would allow them unasked).
    autoAskRules: permissions.parentMode === "ask" ? "person" : permissions.autoAskRules,
    profile: permissions.profile,
    ...(permissions.noSandbox ? { noSandbox: true } : {}),
  };
}

function statusOf(exitReason: string): ChildStatus {
  if (exitReason === "COMPLETED") return "completed";
  if (exitReason === "CANCELLED") return "cancelled";
  return "failed";
}

/** The child's side of the pipe: protocol lines out, escalation answers in. */
class ParentLink {
  readonly #request: ChildRequest;
  readonly #waiting = new Map<string, (answer: PersonAnswer) => void>();
  /** Stdout is closed (the parent is gone): lines are dropped. */
  #gone = false;
  /** Stdin is closed: nobody answers escalations. */
  #deaf = false;
  #next = 0;

  constructor(request: ChildRequest, input: AsyncIterator<string>) {
    this.#request = request;
    this.#read(input);
  }

  /** Writes one line; a parent that is gone is no error (the session keeps the outcome). */
  send(line: ChildLine): void {
    if (this.#gone) return;
    try {
      writeAll(JSON.stringify(line) + "\n");
    } catch {
      this.#gone = true;
    }
  }

  /** Escalations: each call the child's review leaves to a person goes up to the parent. */
  asker(): AskPerson {
    return (review, signal) => {
      if (this.#gone || this.#deaf) return Promise.resolve("deny");
      const escalationId = `e${++this.#next}`;
      const { promise, resolve } = Promise.withResolvers<PersonAnswer>();
      const timer = setTimeout(
        () => resolve("deny"),
        this.#request.permissions.escalationTimeoutMs,
      );
      const onAbort = () => resolve("deny");
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiting.set(escalationId, resolve);
      this.send({
        type: "escalation",
        version: CHILD_PROTOCOL_VERSION,
        runId: this.#request.runId,
        escalationId,
        request: review,
      });
      return promise.finally(() => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.#waiting.delete(escalationId);
      });
    };
  }

  close(): void {
    this.#deaf = true;
    for (const resolve of this.#waiting.values()) resolve("deny");
  }

  async #read(input: AsyncIterator<string>): Promise<void> {
    try {
      for (let next = await input.next(); !next.done; next = await input.next()) {
        if (next.value.trim() === "") continue;
        const line = parseLine(parentLineSchema, next.value, "the parent's line");
        this.#waiting.get(line.escalationId)?.(line.answer);
      }
    } catch (error) {
      logError(error instanceof Error ? error.message : String(error));
    }
    // Nobody answers escalations any more; the run goes on and records its end.
    this.#deaf = true;
    for (const resolve of this.#waiting.values()) resolve("deny");
  }
}

function writeAll(text: string): void {
  const bytes = encoder.encode(text);
  let written = 0;
  while (written < bytes.length) written += Deno.stdout.writeSync(bytes.subarray(written));
}

function logError(text: string): void {
  console.error(`tern child: ${terminalText(text)}`);
}

/**
 * stdout carries protocol lines only: console output any code would print there goes to
 * stderr instead.
 */
function keepStdoutForProtocol(): void {
  const toStderr = (...args: unknown[]) => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
  console.table = toStderr;
  console.dir = toStderr;
}
