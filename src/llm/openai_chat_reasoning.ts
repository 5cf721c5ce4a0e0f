/**
 * Reasoning that Chat Completions servers stream and want back. DeepSeek's thinking mode wants
 * an assistant tool-call message's `reasoning_content` in every later request (else HTTP 400;
 * on messages without tool calls it is ignored, and its V4 models were seen to want it there
 * too); OpenRouter asks for its `reasoning_details` blocks back unmodified, in order, which it
 * streams in pieces keyed by `index`.
 */
import type { ThinkingPart } from "../core/messages.ts";

/** One OpenRouter reasoning block (`reasoning.text`, `reasoning.summary`, `reasoning.encrypted`). */
export type ReasoningDetail = Record<string, unknown>;

/** Fields whose streamed pieces are joined; any other field keeps its last non-empty value. */
const JOINED = new Set(["text", "summary", "data"]);

/**
 * Merges streamed `reasoning_details` pieces into whole blocks: pieces with the same `index`
 * (and type) form one block, their text joined; a piece without an index continues the last
 * block of its type or starts one. Returns the blocks in the order they started. Takes time
 * linear in the pieces: a server's payload of a million pieces must not cost their square.
 */
export class ReasoningDetails {
  #blocks: ReasoningDetail[] = [];
  /** The block of each index, by type: a block keeps the index and type it started with. */
  #byIndex = new Map<number, Map<unknown, ReasoningDetail>>();

  add(pieces: unknown): void {
    if (!Array.isArray(pieces)) return;
    for (const piece of pieces) {
      if (typeof piece !== "object" || piece === null || Array.isArray(piece)) continue;
      const detail = piece as ReasoningDetail;
      const block = this.#blockFor(detail);
      if (block === undefined) {
        const started = { ...detail };
        this.#blocks.push(started);
        if (typeof detail.index === "number") {
          const byType = this.#byIndex.get(detail.index) ?? new Map<unknown, ReasoningDetail>();
          byType.set(detail.type, started);
          this.#byIndex.set(detail.index, byType);
        }
        continue;
      }
      for (const [key, value] of Object.entries(detail)) {
        if (JOINED.has(key) && typeof value === "string" && typeof block[key] === "string") {
          block[key] += value;
        } else if (value !== null && value !== undefined && value !== "") {
          block[key] = value;
        } else if (!(key in block)) {
          block[key] = value;
        }
      }
    }
  }

  /** The merged blocks; empty when none came. */
  get blocks(): ReasoningDetail[] {
    return this.#blocks;
  }

  #blockFor(detail: ReasoningDetail): ReasoningDetail | undefined {
    const last = this.#blocks.at(-1);
    if (typeof detail.index === "number") return this.#byIndex.get(detail.index)?.get(detail.type);
    return last !== undefined && last.type === detail.type && typeof last.index !== "number"
      ? last
      : undefined;
  }
}

/**
 * The reasoning fields an assistant message carries back: `reasoning_details` when the server
 * sent blocks (OpenRouter), else `reasoning_content` when the text came in that field
 * (DeepSeek, vLLM, llama.cpp). Text that came as `reasoning` without blocks is not sent: no
 * server asks for it. A message without Chat Completions reasoning carries none.
 */
export function reasoningToSendBack(
  thinking: readonly ThinkingPart[] | undefined,
): { reasoning_content?: string; reasoning_details?: ReasoningDetail[] } {
  const parts = (thinking ?? []).filter((part) => part.api === "openai");
  const details = parts.flatMap((part) => part.details ?? []);
  if (details.length > 0) return { reasoning_details: details };
  const text = parts
    .filter((part) => (part.field ?? "reasoning_content") === "reasoning_content")
    .map((part) => part.text)
    .join("");
  return text === "" ? {} : { reasoning_content: text };
}
