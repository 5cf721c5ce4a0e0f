/**
 * What ties a turn to its session: every message the loop adds is written as an entry, and
 * before each model call the context is compacted (and the compaction written) once the
 * request passes the configured share of the context window.
 */
import type { AgentEvent, EmitFn } from "../core/events.ts";
import type { Message, Usage } from "../core/messages.ts";
import {
  type CompactionSettings,
  DEFAULT_COMPACTION,
  needsCompaction,
} from "../context/compaction_types.ts";
import { estimateRequestTokens, REQUEST_OVERHEAD_TOKENS } from "../context/tokens.ts";
import { knownSpecTokens } from "../core/spec_tokens.ts";
import { visibleText } from "../core/terminal_text.ts";
import type { Provider, ToolSpec } from "../llm/types.ts";
import type { Session } from "../session/session.ts";
import { imagesFolder, storeImages } from "../session/images.ts";
import type { CompactionEntry, NewEntry } from "../session/types.ts";
import type { UserVoice } from "../session/voice.ts";
import type { AnsweredBy, UnsendableRequest } from "./loop.ts";

type MessageEntry = Extract<NewEntry, { type: "message" }>;

/**
 * An automatic compaction must summarise at least this much: less saves nothing and costs a
 * model call before every round.
 */
const MIN_AUTOMATIC_SUMMARISED_TOKENS = 1_000;

/** Compaction settings for a context window and threshold (the rest are the defaults). */
export function compactionSettings(contextWindow: number, compactAt: number): CompactionSettings {
  // chooseCut() caps the recent part at half the compaction budget, so small windows work too.
  return { ...DEFAULT_COMPACTION, contextWindow, threshold: compactAt };
}

/** Records each message of the turn as a session entry, an answer with who gave it. */
export function recordMessages(
  session: Session,
  mailbox?: (message: Message) => string[] | undefined,
): (message: Message, usage?: Usage, answeredBy?: AnsweredBy) => void {
  const folder = imagesFolder(session.path);
  return (message, usage, answeredBy) => {
    // Images (a tool's) go to the session folder by hash, never inline into the JSONL.
    const entry: MessageEntry = { type: "message", message: storeImages(message, folder) };
    const delivers = mailbox?.(message);
    if (delivers !== undefined && delivers.length > 0) entry.mailbox = delivers;
    if (usage) entry.usage = usage;
    if (answeredBy?.provider !== undefined) entry.provider = answeredBy.provider;
    if (answeredBy?.model !== undefined) entry.model = answeredBy.model;
    if (answeredBy?.cost !== undefined) entry.cost = answeredBy.cost;
    if (answeredBy?.saved !== undefined) entry.saved = answeredBy.saved;
    session.append(entry);
  };
}

/** Writes a fallback switch into the session as a model entry (history, not a choice). */
export function recordSwitch(session: Session, event: AgentEvent): void {
  if (event.type !== "model_switch") return;
  session.append({
    type: "model",
    model: event.model,
    provider: event.provider,
    cause: "fallback",
    reason: event.reason,
  });
}

export interface CompactOptions {
  provider: Provider;
  model: string;
  settings: CompactionSettings;
  emit?: EmitFn;
  /** What the summary should focus on (manual compaction). */
  focus?: string;
  /** Skip when less than this many tokens would be summarised (automatic compaction). */
  minSummarisedTokens?: number;
  signal?: AbortSignal;
  /**
   * Called before the summary is made (PreCompact hooks), with `signal`: a hook that hangs
   * ends with the compaction's cancel. Must not throw.
   */
  beforeCompact?: (signal?: AbortSignal) => Promise<void>;
  /** Masks known keys in the summary the model wrote, before the session keeps it. */
  mask?: (text: string) => string;
}

/**
 * What {@linkcode compactSession} throws when its signal fired: nothing was written, the
 * session is unchanged (the summary a cancelled request leaves is the fallback, which nobody
 * asked for).
 */
export class CompactionCancelledError extends Error {
  constructor(options?: ErrorOptions) {
    super("Compaction cancelled: the session is unchanged", options);
    this.name = "CompactionCancelledError";
  }
}

/** Throws {@linkcode CompactionCancelledError} when `signal` fired. */
function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new CompactionCancelledError({ cause: signal.reason });
}

/**
 * Compacts the session's current context and writes the compaction entry. Returns undefined
 * when there is nothing old enough to summarise.
 *
 * @throws {CompactionCancelledError} when `options.signal` fired before the entry was written:
 * then nothing is written and nothing emitted.
 */
export async function compactSession(
  session: Session,
  options: CompactOptions,
): Promise<CompactionEntry | undefined> {
  throwIfCancelled(options.signal);
  await options.beforeCompact?.(options.signal);
  throwIfCancelled(options.signal);
  const { items } = session.state();
  // The summariser loads only when a compaction happens: it is not on the start-up path.
  const [{ compact }, { userVoice }] = await Promise.all([
    import("../context/compaction.ts"),
    import("../session/voice.ts"),
  ]);
  const result = await compact(items, {
    provider: options.provider,
    model: options.model,
    settings: options.settings,
    focus: options.focus,
    signal: options.signal,
    minSummarisedTokens: options.minSummarisedTokens,
    voiceOf: (content) => notThePerson(userVoice(content)),
  });
  // The last check before the entry is written: a cancelled summary is the fallback.
  throwIfCancelled(options.signal);
  if (!result) return undefined;
  const entry = session.append({
    type: "compaction",
    summary: options.mask?.(result.summary) ?? result.summary,
    firstKeptId: result.firstKeptId,
    tokensBefore: result.tokensBefore,
    tokensAfter: result.tokensAfter,
    summarisedCount: result.summarised.length,
    fallback: result.fallback,
    ...(options.focus ? { focus: options.focus } : {}),
  }) as CompactionEntry;
  options.emit?.({
    type: "compaction",
    tokensBefore: result.tokensBefore,
    tokensAfter: result.tokensAfter,
    summarised: result.summarised.length,
    fallback: result.fallback,
    ...(result.error ? { error: result.error } : {}),
    ...(result.imagesDropped ? { imagesDropped: result.imagesDropped } : {}),
  });
  return entry;
}

/**
 * Most tokens the estimate gives one UTF-16 unit of any text (a lone private-use character,
 * rounded up; 3 for longer text): characters times this bound the estimate from above.
 */
const MAX_TOKENS_PER_CHAR = 4;

/**
 * The loop's `prepare` hook: when the request (system prompt, conversation, tool specs) is over
 * the threshold, or `force` says the server refused it as too long, compacts the session and
 * returns the system prompt plus the new context. A request still over the context window
 * after that (or that no compaction could shorten) is not sent: the hook returns why, with
 * both sizes and what takes the room. The session keeps every message: once the person
 * shortened what was too long, the conversation goes on (`tern run -c`).
 */
export function compactionHook(
  session: Session,
  options: CompactOptions & {
    tools: () => ToolSpec[];
  },
): (
  messages: Message[],
  signal: AbortSignal,
  request?: { force?: boolean },
) => Promise<Message[] | UnsendableRequest | undefined> {
  // Messages and specs do not change once made: each is estimated once, not every round (a
  // long conversation would otherwise cost milliseconds per round).
  const cache = new WeakMap<object, number>();
  const { contextWindow } = options.settings;
  const estimate = (request: Message[], specs: ToolSpec[]) =>
    estimateRequestTokens(request, specs, cache);
  const unsendable = (request: Message[], specs: ToolSpec[], tokens: number, compacted: boolean) =>
    tokens <= contextWindow
      ? undefined
      : { unsendable: overWindow(request, specs, { tokens, contextWindow, compacted, cache }) };
  return async (messages, signal, request) => {
    const force = request?.force === true;
    const specs = options.tools();
    // The turn's first request of a new session (the context holds its task alone): no cut can
    // keep recent tokens and summarise something (chooseCut). Only its size is checked, by its
    // characters first: the estimate costs milliseconds of CPU for the system prompt and tool
    // specs before the first request.
    if (options.settings.keepRecentTokens > 0 && session.state().items.length <= 1) {
      if (!force && surelyFits(messages, specs, contextWindow)) return undefined;
      return unsendable(messages, specs, estimate(messages, specs), false);
    }
    const tokens = force ? undefined : estimate(messages, specs);
    if (tokens !== undefined && !needsCompaction(tokens, options.settings)) return undefined;
    const entry = await compactSession(session, {
      ...options,
      signal,
      // The server said the request is too long, or it is over the window: anything summarised
      // helps.
      minSummarisedTokens: force || (tokens ?? 0) > contextWindow
        ? 0
        : options.minSummarisedTokens ?? MIN_AUTOMATIC_SUMMARISED_TOKENS,
    }).catch((error) => {
      // A cancelled turn: the loop sees the signal and ends it; the context is unchanged.
      if (error instanceof CompactionCancelledError) return undefined;
      throw error;
    });
    if (!entry) {
      if (signal.aborted) return undefined;
      return unsendable(messages, specs, tokens ?? estimate(messages, specs), false);
    }
    const system = messages[0]?.role === "system" ? [messages[0]] : [];
    const compacted = [...system, ...session.state().items.map((item) => item.message)];
    return unsendable(compacted, specs, estimate(compacted, specs), true) ?? compacted;
  };
}

/**
 * True when `request` cannot be over `contextWindow` estimated tokens, by its characters and
 * the specs' estimates known ahead.
 */
function surelyFits(request: Message[], specs: ToolSpec[], contextWindow: number): boolean {
  let chars = 0;
  let tokens = REQUEST_OVERHEAD_TOKENS;
  for (const message of request) chars += JSON.stringify(message).length;
  for (const spec of specs) {
    // The built-in tools' estimates are known ahead: most of a first request's characters.
    const known = knownSpecTokens(spec);
    if (known === undefined) chars += JSON.stringify(spec).length;
    else tokens += known;
  }
  return chars * MAX_TOKENS_PER_CHAR + tokens <= contextWindow;
}

/**
 * Why a request of `tokens` is not sent: both sizes, what takes the room (the system prompt
 * with the context files and pins, the tool definitions, the conversation and its largest
 * message) and what the person can shorten.
 */
function overWindow(
  request: Message[],
  specs: ToolSpec[],
  size: {
    tokens: number;
    contextWindow: number;
    compacted: boolean;
    cache: WeakMap<object, number>;
  },
): string {
  const { tokens, contextWindow, compacted, cache } = size;
  const of = (messages: Message[], tools: ToolSpec[] = []) =>
    estimateRequestTokens(messages, tools, cache) - REQUEST_OVERHEAD_TOKENS;
  const system = request[0]?.role === "system" ? request[0] : undefined;
  const conversation = request.filter((message) => message !== system);
  let largest: { message: Message; tokens: number } | undefined;
  for (const message of conversation) {
    const tokens = of([message]);
    if (largest === undefined || tokens > largest.tokens) largest = { message, tokens };
  }
  const parts = [
    `the system prompt, with context files such as AGENTS.md and pinned instructions, about ` +
    `${system === undefined ? 0 : of([system])}`,
    `the tool definitions about ${of([], specs)}`,
    `the conversation about ${of(conversation)}` +
    (largest === undefined
      ? ""
      : `, its largest message (${kindOf(largest.message)}) about ${largest.tokens}`),
  ];
  return `Cannot send the request: about ${tokens} tokens (estimated), more than the model's ` +
    `context window of ${contextWindow}${compacted ? " even after compaction" : ""} ` +
    `(${parts.join("; ")}): shorten the largest part (the message, AGENTS.md or other context ` +
    "files, a pin, or toolResultChars for tool results) or set contextWindow higher if the " +
    "model takes more (a fallback model's window is its \"models\" row's contextWindow)";
}

/** What a message of the conversation is, for the person. */
function kindOf(message: Message): string {
  switch (message.role) {
    case "tool":
      return `a result of ${JSON.stringify(visibleText(message.name))}`;
    case "assistant":
      return "an answer of the model";
    default:
      return "a user message";
  }
}

/**
 * What a user-role message the person did not write is, for the summary request (tern gives
 * the model such messages as user messages, `src/session/voice.ts`); undefined for the person's.
 */
export function notThePerson(voice: UserVoice): string | undefined {
  switch (voice.from) {
    case "person":
      return undefined;
    case "summary":
      return "summary of earlier work";
    case "branch":
      return "tern's note on work set aside";
    case "subagent":
      return "a subagent's result";
    case "hook":
      return "a hook's output";
    case "diagnostics":
      return "diagnostics of a check";
  }
}
