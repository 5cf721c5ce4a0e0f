/**
 * Plan and execute, composed for a front end: the planner asks the model for the task graph,
 * the executor runs ready nodes at once (each a ReAct worker: a detached turn of the
 * conversation, with the same tools, sandbox and review), and every step is recorded in the
 * session so an interrupted plan continues with `tern plan --resume`. Shared by `tern plan` and
 * `/plan`.
 */
import { readPromptFiles } from "../memory/context_files.ts";
import type { ReadRefusal } from "../config/workspace_file.ts";
import type { AgentEvent, HostFileNotes } from "../core/events.ts";
import { uniqueHexId } from "../core/ids.ts";
import { NoPlanError } from "./errors.ts";
import { PlanningError } from "../plan/errors.ts";
import { addUsage, emptyUsage, type Usage } from "../core/messages.ts";
import { appendNodes, MAX_TASK_CHARS, MAX_TITLE_CHARS, secretProblems } from "../plan/graph.ts";
import { type NodeAttempt, type NodeInput, PlanExecutor } from "../plan/executor.ts";
import { createFailStep, FAIL_STEP_TOOL, reportedFailure } from "../plan/fail_step.ts";
import { PathLocks } from "../plan/path_locks.ts";
import { planTask, replanAfterFailure } from "../plan/planner.ts";
import { DamagedPlanError, latestPlan, newPlanState, recordPlan } from "../plan/record.ts";
import { runOf, runsOfNodes } from "../plan/runs.ts";
import type { PlanNode, PlanState } from "../plan/types.ts";
import type { Session } from "../session/session.ts";
import type { Conversation } from "./conversation.ts";

export interface PlanRunOptions {
  conversation: Conversation;
  /** A new plan for this task… */
  task?: string;
  /** …or the session's latest plan, continued (its SUCCEEDED nodes are not run again). */
  resume?: boolean;
  /** Nodes the person appends before the run; the whole graph must validate. */
  append?: PlanNode[];
  /** Ready nodes run at once. */
  concurrency: number;
  signal: AbortSignal;
  /** The plan is made (or loaded) and about to run. */
  onPlanned?(state: PlanState, attempts: number): void;
  /** A node's run changed. */
  onUpdate?(state: PlanState, nodeId: string): void;
  /** Something worth a line: a replan added nodes or was rejected. */
  onNote?(text: string): void;
  /** Every agent event of a node's worker (its tool calls, its answer), with the node's id. */
  onNodeEvent?(nodeId: string, event: AgentEvent): void;
  /**
   * Files that run code on the host later (`.envrc`, git hooks…) changed since the last report,
   * told when node `nodeId`'s worker ends: by it, or by steps running beside it in the same
   * sandbox. The person should see them, as `tern run` shows a turn's.
   */
  onHostFiles?(nodeId: string, hostFiles: HostFileNotes): void;
}

export interface PlanRunResult {
  state: PlanState;
  cancelled: boolean;
  replans: number;
  /** Tokens of this run: the planner's (and replanner's) calls and every node's worker. */
  usage: Usage;
}

/**
 * The session's newest plan; a damaged one is a {@linkcode NoPlanError} that says so (`mask`ed:
 * it may quote the plan's ids, which a key learned since may be).
 */
function newestPlan(session: Session, mask: (text: string) => string): PlanState | undefined {
  try {
    return latestPlan(session);
  } catch (error) {
    if (!(error instanceof DamagedPlanError)) throw error;
    throw new NoPlanError(
      `The plan of session "${session.id.slice(0, 8)}" cannot continue: ${mask(error.message)}; ` +
        'start a new one with tern plan "task"',
    );
  }
}

/**
 * Makes or loads the plan and runs it to the end (or until `signal`).
 * The person's task (for a resumed plan, the message its outcome records) first goes through
 * the SessionStart and UserPromptSubmit hooks, as `tern run`'s message does: what they add goes
 * to the planner. Stop hooks do not run for each step: a step is part of the work, and a Stop
 * hook that checks the work is done (tests pass) would keep every step going while the others
 * still run; they run once when the plan has run to its end, and what a blocking one says is a
 * note (the plan has no turn to continue).
 * @throws {PlanningError} when no valid graph came back, or (`cancelled`, exit code 130) when a
 *   UserPromptSubmit hook blocked the task; {PlanValidationError} for a rejected append
 *   (nothing is recorded then); {NoPlanError} when there is no plan to resume, or its ids hold a
 *   key tern knows of (learned since the plan was made).
 */
export async function runPlan(options: PlanRunOptions): Promise<PlanRunResult> {
  const { conversation, signal } = options;
  const session = conversation.session;
  const context = workspaceContext(conversation, await conversation.readRefusal());
  const mask = (text: string) => conversation.maskKnownKeys(text);
  let state: PlanState;
  /** The nodes with `options.append`'s, checked before any hook runs for a continued plan. */
  let appended: PlanNode[] | undefined;
  let attempts = 0;
  let usage = emptyUsage();
  if (options.resume) {
    const found = newestPlan(session, mask);
    if (found === undefined) {
      throw new NoPlanError(
        `Session "${
          session.id.slice(0, 8)
        }" has no plan to continue: start one with tern plan "task"`,
      );
    }
    // A key tern learned since the plan was made: its ids would be shown, and its records split.
    const secret = secretProblems(found.nodes, mask);
    if (secret.length > 0) {
      throw new NoPlanError(
        `The plan of session "${session.id.slice(0, 8)}" cannot continue: ${secret.join("; ")}; ` +
          'start a new one with tern plan "task"',
      );
    }
    state = found;
    // A rejected --append changes nothing: no hook runs for it, nothing is recorded.
    if (options.append?.length) appended = appendNodes(state.nodes, options.append, { mask });
    await submitted(conversation, `Continue the plan: ${state.task}`, signal);
  } else {
    const prompt = await submitted(conversation, options.task!, signal);
    const draft = await planTask({
      provider: conversation.provider,
      model: conversation.config.model,
      task: prompt,
      context,
      mask,
      signal,
    }).catch((error) => {
      throw maskedError(conversation, error);
    });
    attempts = draft.attempts;
    usage = addUsage(usage, draft.usage);
    const taken = new Set(
      session.entriesTo().flatMap((e) => {
        const record = e.type === "plan" ? e.data as { kind?: string; plan?: { id?: string } } : {};
        return record.kind === "plan" && record.plan?.id ? [record.plan.id] : [];
      }),
    );
    state = newPlanState(uniqueHexId(taken), options.task!, maskedNodes(conversation, draft.nodes));
    recordPlan(session, { kind: "plan", plan: state });
  }
  if (options.append?.length) {
    const nodes = appended ?? appendNodes(state.nodes, options.append, { mask });
    const added = nodes.slice(state.nodes.length);
    recordPlan(session, { kind: "append", planId: state.id, nodes: added });
    state = { ...state, nodes, runs: runsOfNodes({ nodes, runs: state.runs }) };
  }
  options.onPlanned?.(state, attempts);
  const locks = new PathLocks();
  const executor = new PlanExecutor({
    state,
    concurrency: options.concurrency,
    signal,
    runNode: async (node, inputs, nodeSignal, attempt) => {
      const failStep = createFailStep();
      const prompt = nodePrompt(state.task, node, inputs, attempt);
      const result = await conversation.detachedTurn(prompt, {
        signal: nodeSignal,
        // The AUTO reviewer judges every step against the person's own task.
        goal: state.task,
        aroundWrite: (path, run) => locks.withLock(path, run),
        extraTools: [failStep.tool],
        emit: (event: AgentEvent) => {
          // Recorded before the call runs: a step interrupted now is told it on its next try.
          if (event.type === "tool_start" && !event.readOnly) {
            attempt.callStarted(conversation.maskKnownKeys(callSummary(event.name, event.args)));
          }
          if (event.type === "turn_end" && event.hostFiles !== undefined) {
            options.onHostFiles?.(node.id, event.hostFiles);
          }
          options.onNodeEvent?.(node.id, event);
        },
      });
      usage = addUsage(usage, result.usage);
      // The reason given to fail_step is the model's own, unmasked (the answer is masked).
      const failure = reportedFailure(failStep, result.text);
      if (failure !== undefined) {
        return {
          ok: false,
          text: `reported by the worker: ${conversation.maskKnownKeys(failure)}`,
        };
      }
      if (result.exitReason === "COMPLETED") return { ok: true, text: result.text };
      return { ok: false, text: `${result.exitReason}${result.error ? `: ${result.error}` : ""}` };
    },
    onUpdate: (nodeId, run, current) => {
      recordPlan(session, { kind: "node", planId: current.id, nodeId, run });
      options.onUpdate?.(current, nodeId);
    },
    onAppend: (added, current) => {
      recordPlan(session, { kind: "append", planId: current.id, nodes: added });
      options.onNote?.(`replanned: added ${added.map((n) => `"${n.id}"`).join(", ")}`);
    },
    replan: (failed, current, replanSignal) =>
      replanAfterFailure({
        provider: conversation.provider,
        model: conversation.config.model,
        state: current,
        failed,
        context,
        mask,
        signal: replanSignal,
      }).then((nodes) => maskedNodes(conversation, nodes), (error) => {
        throw maskedError(conversation, error);
      }),
    onReplanRejected: (problems) => options.onNote?.(`replan rejected: ${problems.join("; ")}`),
  });
  // The person's message comes first, so the steps' checkpoint has an entry to belong to: a
  // rewind to it takes back what every step changed.
  const message = session.append({
    type: "message",
    message: {
      role: "user",
      content: `${options.resume ? "Continue the plan" : "Plan"}: ${state.task}`,
    },
  });
  const endCheckpoints = conversation.checkpointDetached(message.id);
  let result: Awaited<ReturnType<PlanExecutor["run"]>>;
  try {
    result = await executor.run();
  } finally {
    await endCheckpoints();
  }
  if (!result.cancelled) {
    const stop = await conversation.stopHooks(signal);
    if (stop !== undefined) options.onNote?.(`a Stop hook says the work is not finished: ${stop}`);
  }
  recordOutcome(conversation, result.state, result.cancelled);
  return { ...result, usage };
}

/**
 * `text` through the SessionStart and UserPromptSubmit hooks: with what they add.
 * @throws {PlanningError} (`cancelled`) with the hook's reason when one blocked it
 */
async function submitted(
  conversation: Conversation,
  text: string,
  signal: AbortSignal,
): Promise<string> {
  const prompt = await conversation.submitPrompt(text, signal);
  if (prompt.blocked) throw new PlanningError(prompt.reason, { cancelled: true });
  return prompt.text;
}

/**
 * `nodes` as the planner wrote them, with known keys masked in their titles and tasks: they are
 * shown, recorded and passed to the steps' workers. (An id or a dependency holding a key was
 * rejected by the planner: a node's id is not masked, but never a key.)
 */
function maskedNodes(conversation: Conversation, nodes: readonly PlanNode[]): PlanNode[] {
  // A marker may be longer than the key it hides: cut back to the limits, so the recorded plan
  // keeps the rules a resumed one is held to.
  return nodes.map((node) => ({
    ...node,
    title: within(conversation.maskKnownKeys(node.title), MAX_TITLE_CHARS),
    task: within(conversation.maskKnownKeys(node.task), MAX_TASK_CHARS),
  }));
}

/** `text` cut to at most `max` UTF-16 units, ending in "…" when cut (never half a pair). */
function within(text: string, max: number): string {
  if (text.length <= max) return text;
  const kept = text.slice(0, max - 1);
  return `${/[\uD800-\uDBFF]$/.test(kept) ? kept.slice(0, -1) : kept}…`;
}

/** `error` with known keys masked in its message (a model API's error may quote what it got). */
function maskedError(conversation: Conversation, error: unknown): unknown {
  if (error instanceof Error) error.message = conversation.maskKnownKeys(error.message);
  return error;
}

/**
 * What a node's worker is told: the whole task for orientation, its own step, its inputs, and
 * (`attempt`) the calls of earlier attempts that were interrupted.
 */
export function nodePrompt(
  task: string,
  node: PlanNode,
  inputs: readonly NodeInput[],
  attempt?: Pick<NodeAttempt, "interrupted" | "moreInterrupted">,
): string {
  const parts = [
    `You are carrying out one step of a larger plan. The whole task: ${task}`,
    `Your step ("${node.id}": ${node.title}):\n${node.task}`,
  ];
  if (attempt !== undefined && attempt.interrupted.length > 0) {
    parts.push(
      "An earlier attempt of this step was interrupted after it had started these calls:\n" +
        attempt.interrupted.map((call) => `- ${call}`).join("\n") +
        (attempt.moreInterrupted ? "\n- (and more after those)" : "") +
        "\nTheir effects may be in the workspace already: check it before you repeat any of " +
        "them (a command that appends, moves, deletes or sends something would do it twice).",
    );
  }
  if (inputs.length > 0) {
    parts.push(
      "Results of the steps this one depends on:\n" +
        inputs.map((input) => `## ${input.id}: ${input.title}\n${input.result}`).join("\n\n"),
    );
  }
  parts.push(
    "Do only this step. Other steps may run at the same time on other files. End with a short " +
      "summary of what you did and found: it is passed on to the steps that depend on this one. " +
      `If the step cannot be done, call ${FAIL_STEP_TOOL} with the reason (or start your answer ` +
      'with "FAILED:"): never report success for a step that did not succeed.',
  );
  return parts.join("\n\n");
}

/** The workspace facts the planner gets: its path, its top-level entries, the context files. */
function workspaceContext(conversation: Conversation, refuse: ReadRefusal): string {
  const workspace = conversation.workspace;
  const names: string[] = [];
  try {
    for (const entry of Deno.readDirSync(workspace)) {
      if (!entry.name.startsWith(".")) {
        names.push(entry.isDirectory ? `${entry.name}/` : entry.name);
      }
      if (names.length >= 60) break;
    }
  } catch {
    // An unreadable workspace just gives less context.
  }
  // The context files every turn gets (AGENTS.md and CLAUDE.md from tern's home, unless a
  // project's files chose the server, and from the repository root down to the workspace),
  // read with the same confinement and caps.
  const files = readPromptFiles({
    workspace,
    ternHome: conversation.config.ternHome,
    warn: () => {},
    refuse,
    personal: conversation.personal,
  }).context;
  return [
    `Workspace: ${workspace}`,
    `Top-level entries: ${names.sort().join(", ") || "(none)"}`,
    ...files.map((file) => `Project context file ${file.path} (follow it):\n${file.text.trim()}`),
  ].join("\n");
}

/**
 * The plan's outcome as the answer to its message (recorded before the steps ran), so a later
 * `tern -c` knows what was done: each node's state and result.
 */
function recordOutcome(conversation: Conversation, state: PlanState, cancelled: boolean): void {
  const lines = state.nodes.map((node) => {
    const run = runOf(state, node.id) ?? { state: "WAITING" };
    const detail = run.state === "SUCCEEDED" ? run.result ?? "" : run.error ?? "";
    // The model wrote the titles and the results: each on its one line, so none can add a
    // line that reads as another step's state.
    const title = oneLine(node.title);
    return `- ${node.id} (${run.state}): ${title}${
      detail ? `\n  ${oneLine(firstLine(detail))}` : ""
    }`;
  });
  const head = cancelled ? "The plan was interrupted." : "The plan ran.";
  conversation.session.append({
    type: "message",
    message: { role: "assistant", content: `${head}\n${lines.join("\n")}` },
  });
}

/** A call as one line for a later attempt: the tool and its command, or its arguments. */
function callSummary(name: string, args: unknown): string {
  const command = (args as { command?: unknown } | null)?.command;
  const detail = typeof command === "string"
    ? command
    : typeof args === "string"
    ? args
    : JSON.stringify(args);
  return `${name}: ${detail}`.replace(/\s+/g, " ").trim();
}

/** Up to the first line break of any kind (`\r`, U+2028 and NEL too). */
function firstLine(text: string): string {
  return text.trim().split(/\r\n|[\n\r\u2028\u2029\u0085]/)[0];
}

/** `text` on one line (runs of white space and line breaks as one space), cut at 200 characters. */
function oneLine(text: string): string {
  return within(text.replace(/[\s\u0085]+/g, " ").trim(), 200);
}
