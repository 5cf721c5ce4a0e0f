/**
 * The model router: one Provider in front of a chain of provider/model targets. It resolves
 * the thinking level for each model, retries failures that may pass (429, 5xx, dropped
 * connections, timeouts) with exponential backoff and jitter, honouring `Retry-After`, moves to
 * the next target of the fallback chain when one gives up, and prices every answer.
 *
 * A stream cut after a tool call started is not retried: the call's arguments are half-sent,
 * and a second answer could differ, so the turn ends with a clear error instead. Text and
 * thinking streamed before a retry are void; the `retry` event says so.
 *
 * A reply with more than {@linkcode MAX_TOOL_CALLS_PER_REPLY} tool calls is not read on: it ends
 * the request with an error. Every API's reply passes here, whatever its transport.
 */
import { abortedError, clientError } from "./errors.ts";
import {
  type ApiStyle,
  cacheSavingsOf,
  costOf,
  type ModelInfo,
  reasoningFor,
} from "./model_info.ts";
import type { Message } from "../core/messages.ts";
import { sleep } from "../core/sleep.ts";
import type { ErrorStreamEvent, ModelRequest, Provider, StreamEvent } from "./types.ts";

/** One provider/model pair of the chain. */
export interface RouteTarget {
  /** The wire provider for this target. */
  provider: Provider;
  /** The provider's configured or preset name (`anthropic`, `ollama`, …). */
  providerName: string;
  api: ApiStyle;
  model: string;
  /** What the catalog knows about `model` (limits, thinking, prices). */
  info: ModelInfo;
}

export interface RouterOptions {
  /** The primary target first, then the fallbacks in order. At least one. */
  targets: RouteTarget[];
  /** Retries of one target before it counts as failed. Default 4. */
  maxRetries?: number;
  /** The first backoff, in milliseconds; doubled each retry. Default 500. */
  retryBaseMs?: number;
  /** Longest backoff, and the longest `Retry-After` worth waiting for, in ms. Default 60,000. */
  maxRetryDelayMs?: number;
  /** Random numbers in [0, 1) for the jitter (tests pin it). Default `Math.random`. */
  random?: () => number;
  /**
   * Facts about a model the targets do not name: a request for another model than the main
   * target's (the AUTO reviewer's, say) goes to the main provider with that model.
   */
  lookup?: (providerName: string, model: string) => ModelInfo;
}

/** A Provider that routes; `current` is the target the next request starts with. */
export interface Router extends Provider {
  readonly current: RouteTarget;
}

/**
 * The most tool calls one reply may make. Models make a few dozen parallel calls at most;
 * thousands are a runaway repetition or a hostile server, and each call costs a run, a result
 * sent back on every later request, and memory. Such a reply ends the turn with an error rather
 * than telling the model to retry with fewer: the model that ran away once is likely to do it
 * again, at the price of another runaway reply, and nothing of the reply needs to be kept.
 */
export const MAX_TOOL_CALLS_PER_REPLY = 128;

const DEFAULT_MAX_RETRIES = 4;
const DEFAULT_RETRY_BASE_MS = 500;
const DEFAULT_MAX_RETRY_DELAY_MS = 60_000;

/**
 * Creates the router. Once it falls back, later requests start at the target that answered:
 * a model that just failed repeatedly is not asked first again within the same run. A request
 * for another model (the reviewer's) goes to the main provider with that model while the run
 * is on the main target; after a fallback it goes to the fallback target and its model.
 * @throws {TypeError} without targets.
 */
export function createRouter(options: RouterOptions): Router {
  if (options.targets.length === 0) throw new TypeError("Cannot route model requests: no targets");
  const settings = {
    maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
    retryBaseMs: options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS,
    maxRetryDelayMs: options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS,
    random: options.random ?? Math.random,
  };
  let start = 0;
  return {
    get name() {
      return options.targets[start].providerName;
    },
    get current() {
      return options.targets[start];
    },
    async close() {
      const providers = new Set(options.targets.map((target) => target.provider));
      await Promise.all([...providers].map((provider) => provider.close?.()));
    },
    async *stream(request, signal) {
      for (let index = start; index < options.targets.length; index++) {
        const target = index === 0
          ? forModel(options.targets[0], request.model, options)
          : options.targets[index];
        // The switch happens before `done` is handed over: a consumer that stops reading at
        // `done` ends this generator there, and the next request must still start here.
        const answered = () => {
          start = index;
        };
        const outcome = yield* tryTarget(target, request, { signal, settings, answered });
        if (outcome.kind === "done") return;
        const next = options.targets[index + 1];
        if (outcome.kind === "final" || next === undefined) {
          yield outcome.error;
          return;
        }
        yield {
          type: "fallback",
          from: label(target),
          to: label(next),
          provider: next.providerName,
          model: next.model,
          reason: outcome.error.message,
        };
      }
    },
  };
}

/** The main target, or the same provider with the model a request asks for. */
function forModel(target: RouteTarget, model: string, options: RouterOptions): RouteTarget {
  if (model === "" || model === target.model || options.lookup === undefined) return target;
  return { ...target, model, info: options.lookup(target.providerName, model) };
}

/** `provider/model`, as events and messages name a target. */
export function label(target: Pick<RouteTarget, "providerName" | "model">): string {
  return `${target.providerName}/${target.model}`;
}

type Outcome =
  | { kind: "done" }
  /** The error ends the request: no fallback helps (aborted, rejected, cut mid tool call). */
  | { kind: "final"; error: ErrorStreamEvent }
  /** The target gave up on an error that may pass elsewhere. */
  | { kind: "exhausted"; error: ErrorStreamEvent };

interface Settings {
  maxRetries: number;
  retryBaseMs: number;
  maxRetryDelayMs: number;
  random: () => number;
}

interface TryOptions {
  signal: AbortSignal | undefined;
  settings: Settings;
  /** Called when the target answered, before its `done` event is yielded. */
  answered: () => void;
}

async function* tryTarget(
  target: RouteTarget,
  request: ModelRequest,
  { signal, settings, answered }: TryOptions,
): AsyncGenerator<StreamEvent, Outcome> {
  const wire = requestFor(target, request);
  for (let attempt = 1;; attempt++) {
    let toolCallStarted = false;
    const calls = new Set<number>();
    let failure: ErrorStreamEvent | undefined;
    for await (const event of target.provider.stream(wire, signal)) {
      if (event.type === "error") {
        failure = event;
        break;
      }
      if (event.type === "tool_call_delta") {
        toolCallStarted = true;
        calls.add(event.index);
        // Leaving the loop ends the provider's stream: the rest of the reply is not read.
        if (calls.size > MAX_TOOL_CALLS_PER_REPLY) return { kind: "final", error: tooManyCalls() };
      }
      if (event.type === "done") {
        answered();
        yield priced(event, target);
        return { kind: "done" };
      }
      yield event;
    }
    if (failure === undefined) {
      failure = clientError(`Provider "${target.providerName}" ended without a result`);
    }
    if (failure.kind === "aborted") return { kind: "final", error: failure };
    if (!failure.retryable) return { kind: "final", error: failure };
    if (toolCallStarted) {
      return {
        kind: "final",
        error: clientError(
          `${failure.message}, in the middle of a tool call; not retried, because the ` +
            "call was cut off: run the task again",
          failure.status,
        ),
      };
    }
    if (failure.longTimeout) {
      // The attempt used up a long timeout (30 minutes, or 10 without content): another would
      // likely wait as long, so the next target of the chain is tried, if any.
      return { kind: "exhausted", error: clientError(`${failure.message} (not retried)`) };
    }
    const waitMs = failure.retryAfterMs;
    if (waitMs !== undefined && waitMs > settings.maxRetryDelayMs) {
      return {
        kind: "exhausted",
        error: clientError(
          `${failure.message} (the server asked to wait ${waitText(waitMs)})`,
          failure.status,
        ),
      };
    }
    if (attempt > settings.maxRetries) {
      return {
        kind: "exhausted",
        error: clientError(
          `${failure.message} (gave up after ${attempt} ${attempt === 1 ? "attempt" : "attempts"})`,
          failure.status,
        ),
      };
    }
    // At least what the server asked for, and never less than the backoff: a `Retry-After: 0`
    // on every answer must not turn the retries into a tight loop.
    const delayMs = Math.max(waitMs ?? 0, backoff(attempt, settings));
    yield { type: "retry", attempt, delayMs, reason: failure.message };
    if (!(await sleep(delayMs, signal))) return { kind: "final", error: abortedError() };
  }
}

/** A wait a server asked for, as words: a date years ahead reads as "more than a day". */
function waitText(ms: number): string {
  const seconds = Math.ceil(ms / 1000);
  return seconds > 86_400 ? "more than a day" : `${seconds} s`;
}

/** The error for a reply that went past {@linkcode MAX_TOOL_CALLS_PER_REPLY} calls. */
function tooManyCalls(): ErrorStreamEvent {
  return clientError(
    `Model reply has more than ${MAX_TOOL_CALLS_PER_REPLY} tool calls, more than tern runs ` +
      "from one reply; the reply was not used: ask for fewer calls at a time",
  );
}

/** The request as this target gets it: its model, and reasoning resolved for that model. */
function requestFor(target: RouteTarget, request: ModelRequest): ModelRequest {
  const wire: ModelRequest = { ...request, model: target.model };
  delete wire.reasoning;
  const level = request.thinking;
  const reasoning = level === undefined ? request.reasoning : reasoningFor(target.info, level);
  if (reasoning !== undefined && target.info.reasoning !== undefined) wire.reasoning = reasoning;
  if (!target.info.images) wire.messages = withoutImages(request.messages, target.model);
  return wire;
}

/**
 * `messages` for a model that takes no images: each image becomes a note in its message's
 * text, so the model knows what it was given and does not try other ways to look at it.
 */
export function withoutImages(messages: Message[], model: string): Message[] {
  if (!messages.some((m) => (m.role === "user" || m.role === "tool") && m.images?.length)) {
    return messages;
  }
  return messages.map((message) => {
    if ((message.role !== "user" && message.role !== "tool") || !message.images?.length) {
      return message;
    }
    const { images, ...rest } = message;
    const count = images.length === 1 ? "The image is" : `The ${images.length} images are`;
    const note = `[${count} not shown: model "${model}" does not take images (catalog ` +
      'images: false; set "images": true for it under "models" in the config if it does)]';
    return { ...rest, content: `${message.content}\n${note}` };
  });
}

function priced(event: Extract<StreamEvent, { type: "done" }>, target: RouteTarget): StreamEvent {
  const done = { ...event, provider: target.providerName, model: target.model };
  const cost = event.usage === undefined ? undefined : costOf(target.info, event.usage);
  if (cost !== undefined) done.cost = cost;
  const saved = event.usage === undefined ? undefined : cacheSavingsOf(target.info, event.usage);
  if (saved !== undefined) done.saved = saved;
  return done;
}

/** Exponential backoff with equal jitter: half the step fixed, half random. */
function backoff(attempt: number, settings: Settings): number {
  const step = Math.min(settings.maxRetryDelayMs, settings.retryBaseMs * 2 ** (attempt - 1));
  return Math.round(step / 2 + settings.random() * (step / 2));
}
