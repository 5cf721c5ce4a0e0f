/**
 * Rebuilds complete tool calls from streamed fragments, keyed by `index`; parallel calls
 * interleave. OpenAI sends a call's id and name once and its arguments in pieces; other servers
 * split the id and name too (`ba` + `sh`), and others repeat the whole id and name on every
 * piece. `joinPiece()` tells these apart.
 */
import type { ToolCall } from "../core/messages.ts";
import { argumentsText, isRecord, optionalString, uniqueCallIds } from "./wire_fields.ts";

/** One streamed piece of a tool call, as in `choices[].delta.tool_calls[]`. */
export interface ToolCallFragment {
  /** Which call this piece belongs to. Some servers omit it; see `ToolCallAccumulator.add`. */
  index?: number;
  id?: string | null;
  type?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
  /** Gemini: `{ google: { thought_signature } }`, to be sent back with the call. */
  extra_content?: Record<string, unknown> | null;
}

interface Slot {
  id: string;
  name: string;
  arguments: string;
  extraContent?: Record<string, unknown>;
}

/** Merges tool-call fragments by index. */
export class ToolCallAccumulator {
  #slots = new Map<number, Slot>();
  #lastIndex: number | undefined;

  /**
   * Merges one fragment and returns the index it was merged into. Id and name pieces are
   * joined by `joinPiece()`; argument text is appended (arguments sent as an object are written
   * as JSON). A fragment without an index opens a new call when it carries an id not seen yet,
   * else continues the last call. The fragment comes from the server, so every field is checked.
   * @throws {WireFieldError} when the id or name is there but not a string.
   */
  add(fragment: ToolCallFragment): number {
    const id = optionalString(fragment.id, "tool call id");
    const fn: Record<string, unknown> = isRecord(fragment.function) ? fragment.function : {};
    const name = optionalString(fn.name, "tool call name");
    const args = argumentsText(fn.arguments);
    const index = this.#indexOf(id, fragment.index);
    let slot = this.#slots.get(index);
    if (slot === undefined) {
      slot = { id: "", name: "", arguments: "" };
      this.#slots.set(index, slot);
    }
    if (id) slot.id = joinPiece(slot.id, id);
    if (name) slot.name = joinPiece(slot.name, name);
    if (args) slot.arguments += args;
    const extra = fragment.extra_content;
    if (typeof extra === "object" && extra !== null && !Array.isArray(extra)) {
      slot.extraContent = { ...slot.extraContent, ...extra };
    }
    this.#lastIndex = index;
    return index;
  }

  /** Number of distinct calls seen so far. */
  get size(): number {
    return this.#slots.size;
  }

  /**
   * The calls in index order. A call that never got an id is given `call_<index>`; ids are made
   * unique (`uniqueCallIds()`).
   */
  toolCalls(): ToolCall[] {
    return uniqueCallIds(
      [...this.#slots.entries()]
        .sort(([a], [b]) => a - b)
        .map(([index, slot]) => {
          const call: ToolCall = {
            id: slot.id === "" ? `call_${index}` : slot.id,
            name: slot.name,
            arguments: slot.arguments,
          };
          if (slot.extraContent !== undefined) call.extraContent = slot.extraContent;
          return call;
        }),
    );
  }

  #indexOf(id: string | undefined, index: unknown): number {
    if (typeof index === "number" && Number.isSafeInteger(index)) return index;
    const known = [...this.#slots.entries()].find(([, slot]) => slot.id !== "" && slot.id === id);
    if (known !== undefined) return known[0];
    if (id || this.#lastIndex === undefined) {
      return this.#slots.size === 0 ? 0 : Math.max(...this.#slots.keys()) + 1;
    }
    return this.#lastIndex;
  }
}

/**
 * Joins a streamed piece of a tool call's id or name to the text so far. A piece equal to the
 * text so far is a repetition (servers that send the whole value on every piece), and a piece
 * that starts with it is the whole value grown (servers that send the value so far); any other
 * piece continues the text (`ba` + `sh` is `bash`). A name that really is one piece twice
 * (`abab` sent as `ab` + `ab`) is the one case this reads wrongly; no tool name is like that.
 */
export function joinPiece(sofar: string, piece: string): string {
  if (piece.startsWith(sofar)) return piece;
  return sofar + piece;
}
