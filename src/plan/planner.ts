/**
 * The planner: asks the model for a JSON task graph (or, after a failure, for nodes to append)
 * in a request without tools, and gives it one corrective retry naming what was wrong.
 */
import { addUsage, emptyUsage, type Message, type Usage } from "../core/messages.ts";
import type { FinishReason, Provider, ThinkingLevel } from "../llm/types.ts";
import { PlanningError, PlanValidationError } from "./errors.ts";
import { appendNodes, parsePlan } from "./graph.ts";
import { runOf } from "./runs.ts";
import {
  correctionMessage,
  PLANNER_SYSTEM_PROMPT,
  planningMessage,
  REPLANNER_SYSTEM_PROMPT,
  replanningMessage,
} from "./planner_prompt.ts";
import type { PlanNode, PlanState } from "./types.ts";

/** Output token cap of a planning request when the caller names none. */
export const DEFAULT_PLANNER_MAX_TOKENS = 4_000;

/** The first answer plus the one corrective retry. */
const MAX_ATTEMPTS = 2;

const PREVIEW_CHARS = 120;

export interface PlannerOptions {
  provider: Provider;
  model: string;
  /** The person's task. */
  task: string;
  /** Facts about the workspace for the planner: its path, top-level listing, project rules. */
  context?: string;
  /** Output token cap per request (default {@linkcode DEFAULT_PLANNER_MAX_TOKENS}). */
  maxTokens?: number;
  /** How hard the model should think; omitted means the provider's default. */
  thinking?: ThinkingLevel;
  /**
   * Masks the keys tern knows of in a text. A node whose id or dependency holds one is rejected
   * (the corrective retry asks for another), and no problem told (to the model, in the error)
   * quotes one. Omitted: nothing is masked.
   */
  mask?: (text: string) => string;
  signal?: AbortSignal;
}

/** A validated plan and what it took to get it. */
export interface PlanDraft {
  nodes: PlanNode[];
  /** 1, or 2 after the corrective retry. */
  attempts: number;
  /** Summed over every request made. */
  usage: Usage;
}

export interface ReplanOptions extends Omit<PlannerOptions, "task"> {
  /** The plan as it is now; its `task` is the person's task. */
  state: PlanState;
  /** The node that failed and why. */
  failed: { node: PlanNode; error: string };
}

/**
 * Asks the model for the task graph and validates it with `parsePlan`; a rejected answer gets
 * one corrective retry that quotes the problems.
 * @throws {PlanningError} naming the problems of the second answer, or the provider's error
 */
export async function planTask(options: PlannerOptions): Promise<PlanDraft> {
  const messages: Message[] = [
    { role: "system", content: PLANNER_SYSTEM_PROMPT },
    { role: "user", content: planningMessage(options.task, options.context) },
  ];
  const { value, attempts, usage } = await negotiate(
    options,
    messages,
    "plan the task",
    (answer) => parsePlan(answer, { mask: options.mask }),
  );
  return { nodes: value, attempts, usage };
}

/**
 * Asks the model for nodes to append to `state.nodes` after `failed` failed, validated with
 * `appendNodes`; the new nodes must not depend on a FAILED or BLOCKED node (they would never
 * run). Same one corrective retry as {@linkcode planTask}.
 * @returns the added nodes (trimmed as `appendNodes` does); `[]` when the model answers
 *   `{"nodes":[]}`, meaning nothing can be done
 * @throws {PlanningError} naming the problems of the second answer, or the provider's error
 */
export async function replanAfterFailure(options: ReplanOptions): Promise<PlanNode[]> {
  const { state, failed } = options;
  const messages: Message[] = [
    { role: "system", content: REPLANNER_SYSTEM_PROMPT },
    { role: "user", content: replanningMessage(state, failed, options.context) },
  ];
  const what = `replan after node "${failed.node.id}" failed`;
  const { value } = await negotiate(
    options,
    messages,
    what,
    (answer) => addedNodes(answer, state, options.mask),
  );
  return value;
}

/**
 * The JSON in a model's answer: the whole text if it parses, else the first ```json fenced
 * block (or else the first ``` block), else the text from the first `{` to the last `}`.
 * Never throws: an answer with none of these that parses gives a `problem`.
 */
export function extractJson(text: string): { value: unknown } | { problem: string } {
  const trimmed = text.trim();
  if (trimmed === "") return { problem: "the answer is empty" };
  const first = trimmed.indexOf("{");
  const last = trimmed.lastIndexOf("}");
  const candidates = [
    trimmed,
    fencedBlock(trimmed),
    first !== -1 && last > first ? trimmed.slice(first, last + 1) : undefined,
  ];
  for (const candidate of candidates) {
    if (candidate === undefined) continue;
    try {
      return { value: JSON.parse(candidate) };
    } catch {
      // try the next way of finding the JSON
    }
  }
  const flat = trimmed.replace(/\s+/g, " ");
  const preview = flat.length > PREVIEW_CHARS ? `${flat.slice(0, PREVIEW_CHARS)}…` : flat;
  return { problem: `the answer is not JSON: ${JSON.stringify(preview)}` };
}

/**
 * The body of the first ```` ```json ```` block (the fence line holding nothing else), else of the
 * first ```` ``` ```` block; undefined when there is none. Found with `indexOf`, in time linear in
 * the text: a pattern that backtracks (```` /```[^\n]*\n([\s\S]*?)```/ ````) takes minutes on a
 * few hundred kilobytes of backticks, and blocks the process (its Ctrl-C too) while it runs.
 */
function fencedBlock(text: string): string | undefined {
  const opener = /```json/gi;
  for (let found = opener.exec(text); found !== null; found = opener.exec(text)) {
    let end = opener.lastIndex;
    while (end < text.length && text[end] !== "\n" && /\s/.test(text[end])) end++;
    // No block closes after the first opener: none closes after a later one either.
    if (text[end] === "\n") {
      const body = blockFrom(text, end + 1);
      if (body !== undefined) return body;
      break;
    }
  }
  const fence = text.indexOf("```");
  const line = fence === -1 ? -1 : text.indexOf("\n", fence + 3);
  return line === -1 ? undefined : blockFrom(text, line + 1);
}

/** The text from `start` to the next ```` ``` ````; undefined when none follows. */
function blockFrom(text: string, start: number): string | undefined {
  const close = text.indexOf("```", start);
  return close === -1 ? undefined : text.slice(start, close);
}

/** The replanner's answer checked against the plan: the added nodes, or PlanValidationError. */
function addedNodes(
  answer: unknown,
  state: PlanState,
  mask: ((text: string) => string) | undefined,
): PlanNode[] {
  const nodes = typeof answer === "object" && answer !== null && !Array.isArray(answer)
    ? (answer as Record<string, unknown>).nodes
    : undefined;
  if (!Array.isArray(nodes)) {
    throw new PlanValidationError(['the answer must be a JSON object {"nodes": [...]}']);
  }
  if (nodes.length === 0) return [];
  const added = appendNodes(state.nodes, nodes as PlanNode[], { mask }).slice(state.nodes.length);
  const problems: string[] = [];
  for (const node of added) {
    for (const dep of node.dependsOn) {
      const depState = runOf(state, dep)?.state;
      if (depState === "FAILED" || depState === "BLOCKED") {
        problems.push(
          `"${node.id}" depends on "${dep}", which is ${depState} and never runs again`,
        );
      }
    }
  }
  if (problems.length > 0) throw new PlanValidationError(problems);
  return added;
}

/**
 * Sends `messages`, checks the answer with `accept` (which throws PlanValidationError to
 * reject it) and on a rejection asks once more with the problems.
 */
async function negotiate<T>(
  options: Omit<PlannerOptions, "task">,
  initial: Message[],
  what: string,
  accept: (value: unknown) => T,
): Promise<{ value: T; attempts: number; usage: Usage }> {
  let messages = initial;
  let usage = emptyUsage();
  for (let attempt = 1;; attempt++) {
    const reply = await complete(options, messages, what, usage);
    usage = addUsage(usage, reply.usage);
    const verdict = judge(reply, accept, options.mask ?? ((text) => text));
    if ("value" in verdict) return { value: verdict.value, attempts: attempt, usage };
    if (attempt === MAX_ATTEMPTS) {
      const problems = verdict.problems;
      throw new PlanningError(
        `Cannot ${what}: the model's answer was rejected twice: ${problems.join("; ")}`,
        { problems, usage },
      );
    }
    messages = [
      ...messages,
      { role: "assistant", content: reply.text },
      { role: "user", content: correctionMessage(verdict.problems) },
    ];
  }
}

/** The accepted value, or the problems of the answer (with `mask` applied: the answer's own words). */
function judge<T>(
  reply: Reply,
  accept: (value: unknown) => T,
  mask: (text: string) => string,
): { value: T } | { problems: string[] } {
  const json = extractJson(reply.text);
  if ("problem" in json) {
    const problems = [mask(json.problem)];
    if (reply.finishReason === "length") {
      problems.push("the answer was cut off at the output token limit: use fewer, shorter nodes");
    } else if (reply.finishReason === "refusal") {
      problems.push("the model API stopped the answer (a content filter or the model's refusal)");
    }
    return { problems };
  }
  try {
    return { value: accept(json.value) };
  } catch (error) {
    if (error instanceof PlanValidationError) return { problems: error.problems.map(mask) };
    throw error;
  }
}

interface Reply {
  text: string;
  usage: Usage;
  finishReason: FinishReason;
}

/** One model call, its streamed text collected; every failure becomes a PlanningError. */
async function complete(
  options: Omit<PlannerOptions, "task">,
  messages: Message[],
  what: string,
  spent: Usage,
): Promise<Reply> {
  const failure = (detail: string, cause?: unknown) =>
    options.signal?.aborted
      ? new PlanningError(`Cannot ${what}: cancelled`, { usage: spent, cancelled: true, cause })
      : new PlanningError(`Cannot ${what}: the model call failed: ${detail}`, {
        usage: spent,
        cause,
      });
  const stream = options.provider.stream({
    model: options.model,
    messages,
    tools: [],
    maxTokens: options.maxTokens ?? DEFAULT_PLANNER_MAX_TOKENS,
    temperature: 0,
    ...(options.thinking === undefined ? {} : { thinking: options.thinking }),
  }, options.signal);
  let streamed = "";
  try {
    for await (const event of stream) {
      if (event.type === "text_delta") streamed += event.text;
      else if (event.type === "retry") streamed = ""; // the attempt starts over
      else if (event.type === "error") throw failure(event.message);
      else if (event.type === "done") {
        return {
          text: event.message.content !== "" ? event.message.content : streamed,
          usage: event.usage ?? emptyUsage(),
          finishReason: event.finishReason,
        };
      }
    }
  } catch (error) {
    if (error instanceof PlanningError) throw error;
    // Providers must not throw; a broken one still gets a clear message.
    throw failure(error instanceof Error ? error.message : String(error), error);
  }
  throw failure("the stream ended without a result");
}
