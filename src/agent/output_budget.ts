/**
 * Caps on what the model's answers add to a turn. Each answer the turn keeps stays in memory
 * until the turn ends and is written to the session as one JSONL line, so without a cap a
 * server streaming hundreds of megabytes per answer, each with a tool call so the turn goes on,
 * grew both every round until V8 ran out of memory and left a session ending in a cut-off line.
 *
 * Sizes are UTF-8 bytes of the answer as JSON, the unit of the session reader's line cap
 * (`MAX_LINE_BYTES` in src/session/_lines.ts, 64 MiB). The wire cap (`MAX_ANSWER_CHARS` in
 * src/llm/sse.ts) counts event data with its envelopes instead, and bounds reading only.
 */
import { pairStartsAt } from "../core/code_points.ts";
import type { AssistantMessage } from "../core/messages.ts";

const MIB = 1024 * 1024;

/**
 * The most one answer may hold (text, reasoning and tool calls): 16 MiB. The longest answer a
 * real model gives, about 128,000 output tokens, is 0.5 to 1 MB, so this leaves room for a
 * large `write` call; at a quarter of the session's 64 MiB line cap, an answer's entry (with
 * key masking and the entry's own fields) is always read back whole.
 */
export const MAX_ANSWER_BYTES = 16 * MIB;

/**
 * The most all answers of one turn may hold together: 64 MiB. Real answers under 1 MB stay
 * under 25 MB at the default 25 rounds; past 64 MiB a server is flooding the turn, which ends
 * before its memory and session file grow further. The next message starts a new budget.
 */
export const MAX_TURN_OUTPUT_BYTES = 64 * MIB;

/** Limits in UTF-8 bytes of the answers as JSON. */
export interface OutputLimits {
  /** Most one answer may hold. Default `MAX_ANSWER_BYTES`. */
  answerBytes: number;
  /** Most the turn's kept answers may hold together. Default `MAX_TURN_OUTPUT_BYTES`. */
  turnBytes: number;
}

/** Counts one turn's answers against its limits; each check returns why the turn must end. */
export class OutputBudget {
  readonly #limits: OutputLimits;
  /** Bytes of the answers kept so far. */
  #spent = 0;
  /** Characters of text and reasoning the current attempt has streamed. */
  #streamed = 0;

  constructor(limits: Partial<OutputLimits> = {}) {
    this.#limits = {
      answerBytes: limits.answerBytes ?? MAX_ANSWER_BYTES,
      turnBytes: limits.turnBytes ?? MAX_TURN_OUTPUT_BYTES,
    };
  }

  /**
   * Counts `chars` more streamed text or reasoning. A character is at least one byte, so the
   * answer is over a limit once what streamed is: it is not read further.
   */
  streamed(chars: number): string | undefined {
    this.#streamed += chars;
    return this.#over(this.#streamed);
  }

  /** A retry or fallback voided what the attempt streamed so far. */
  restart(): void {
    this.#streamed = 0;
  }

  /** Counts a whole answer: adds it to the turn's total, or says why it may not be kept. */
  take(message: AssistantMessage): string | undefined {
    this.#streamed = 0;
    const bytes = answerBytes(message, this.#limits.answerBytes);
    const why = this.#over(bytes);
    if (why === undefined) this.#spent += bytes;
    return why;
  }

  #over(bytes: number): string | undefined {
    const { answerBytes, turnBytes } = this.#limits;
    if (bytes > answerBytes) {
      return `The model's answer passed ${size(answerBytes)}: tern stopped reading it and ` +
        "ended the turn";
    }
    if (this.#spent + bytes > turnBytes) {
      return `The model's answers in this turn passed ${size(turnBytes)} together: tern ended ` +
        "the turn (a new message starts a new budget)";
    }
    return undefined;
  }
}

/**
 * UTF-8 bytes of `message` as JSON; any number above `limit` once its strings alone pass it (so
 * an answer far over the limit is never serialised).
 */
export function answerBytes(message: AssistantMessage, limit = Infinity): number {
  let chars = message.content.length;
  for (const part of message.thinking ?? []) {
    chars += part.text.length + (part.signature?.length ?? 0) + (part.data?.length ?? 0);
  }
  for (const call of message.toolCalls ?? []) chars += call.name.length + call.arguments.length;
  if (chars > limit) return chars;
  return utf8Length(JSON.stringify(message));
}

/** Bytes of `text` in UTF-8 (a lone surrogate as the 3 bytes of U+FFFD). */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (pairStartsAt(text, i)) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

function size(bytes: number): string {
  return bytes % MIB === 0 ? `${bytes / MIB} MiB` : `${bytes} bytes`;
}
