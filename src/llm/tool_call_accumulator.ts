/**
 * Rebuilds complete tool calls from streamed fragments, keyed by `index`; parallel calls
 * interleave. OpenAI sends a call's id and name once and its arguments in pieces; other servers
 * split the id and name too (`ba` + `sh`), and others repeat the whole id and name on every
 * piece. `joinPiece()` tells these apart. Some servers send each call whole under an index (or
 * none) that an earlier call already used: Ollama every call as index 0 with its own id, Gemini
 * behind some proxies every call with an empty id and no index. `startsAnotherCall()` tells
 * those from pieces of one call.
 */
import type { ToolCall } from "../core/messages.ts";
import {
  argumentsObject,
  argumentsText,
  isRecord,
  optionalString,
  uniqueCallIds,
  WireFieldError,
} from "./wire_fields.ts";

/**
 * The longest tool call id or name read: far above any server's (ids of about 40 characters,
 * names of at most 64), low enough that joining thousands of pieces stays cheap (an id grown
 * one character a piece made a million-character id whose every length was kept, and tern ran
 * out of memory).
 */
export const MAX_CALL_FIELD_CHARS = 256;

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
  /** The index events and default ids name the call by: unique among the calls. */
  index: number;
  /** Where the call sorts: the server's index, else `index`. */
  order: number;
  id: string;
  /**
   * Another id the server sent for this call once its arguments began, set aside (Poolside
   * sends one id on a call's first piece and another on every later one); empty when none.
   */
  alias: string;
  name: string;
  arguments: string;
  /** Whether `arguments` is one whole JSON object so far, read as it grows. */
  shape: ObjectShape;
  /**
   * The call's `extra_content` pieces, merged (later keys win) only by `toolCalls()`: merging
   * each piece into the ones before cost the square of their number (10,000 pieces, 30 s).
   */
  extraContent: Record<string, unknown>[];
}

/** The parts of one fragment that decide where it goes. */
interface Piece {
  id?: string;
  /** `function` on a call's first piece (OpenAI); some servers repeat it. */
  type?: string;
  name?: string;
  args?: string;
}

/**
 * Merges tool-call fragments by index, in time linear in the fragments: a reply of thousands of
 * calls must not cost their square.
 */
export class ToolCallAccumulator {
  /** The calls in the order they opened. */
  #slots: Slot[] = [];
  /** The call each server index names now: a new call under a used index takes it over. */
  #byIndex = new Map<number, Slot>();
  /** The indexes the calls took. */
  #taken = new Set<number>();
  /** The highest index taken, -1 before any. */
  #highest = -1;
  /**
   * The calls that took each id, in the order they took it, from `head` on: a call whose id
   * grew since is passed over once (ids only grow, so it never has that id again).
   */
  #byId = new Map<string, { slots: Slot[]; head: number }>();
  #last: Slot | undefined;

  /**
   * Merges one fragment and returns the index of the call it was merged into. Id and name
   * pieces are joined by `joinPiece()`; argument text is appended (arguments sent as an object
   * are written as JSON). A fragment opens a new call when it starts another one than its index
   * names (`startsAnotherCall()`). A fragment without an index opens a new call when it carries
   * an id not seen yet or starts another call, else continues the last call. The fragment comes
   * from the server, so every field is checked.
   * @throws {WireFieldError} when the id or name is there but not a string, or grows longer
   * than {@linkcode MAX_CALL_FIELD_CHARS}.
   */
  add(fragment: ToolCallFragment): number {
    const id = optionalString(fragment.id, "tool call id");
    const fn: Record<string, unknown> = isRecord(fragment.function) ? fragment.function : {};
    const name = optionalString(fn.name, "tool call name");
    const args = argumentsText(fn.arguments);
    const type = typeof fragment.type === "string" ? fragment.type : undefined;
    const slot = this.#slotFor(fragment.index, { id, type, name, args });
    if (id && joinsId(slot, { id, name, args })) {
      this.#setId(slot, withinLimit(joinPiece(slot.id, id), "id"));
    } else if (id && id !== slot.id) slot.alias = withinLimit(id, "id");
    if (name) slot.name = withinLimit(joinPiece(slot.name, name), "name");
    if (args) {
      slot.arguments += args;
      slot.shape.add(args);
    }
    const extra = fragment.extra_content;
    if (typeof extra === "object" && extra !== null && !Array.isArray(extra)) {
      slot.extraContent.push(extra as Record<string, unknown>);
    }
    this.#last = slot;
    return slot.index;
  }

  /** Number of distinct calls seen so far. */
  get size(): number {
    return this.#slots.length;
  }

  /**
   * The calls in index order (calls under one index in the order they came). A call that never
   * got an id is given `call_<index>`; ids are made unique (`uniqueCallIds()`).
   */
  toolCalls(): ToolCall[] {
    return uniqueCallIds(
      [...this.#slots]
        .sort((a, b) => a.order - b.order)
        .map((slot) => {
          const call: ToolCall = {
            id: slot.id === "" ? `call_${slot.index}` : slot.id,
            name: slot.name,
            // Ollama writes a call without parameters as `null`: no arguments, read as `{}`.
            arguments: isNullArguments(slot.arguments) ? "" : slot.arguments,
          };
          if (slot.extraContent.length > 0) {
            call.extraContent = Object.fromEntries(slot.extraContent.flatMap(Object.entries));
          }
          return call;
        }),
    );
  }

  #slotFor(index: unknown, piece: Piece): Slot {
    if (typeof index === "number" && Number.isSafeInteger(index)) {
      const slot = this.#byIndex.get(index);
      if (slot !== undefined && !startsAnotherCall(slot, piece)) return slot;
      const opened = this.#open(this.#taken.has(index) ? this.#nextIndex() : index, index);
      this.#byIndex.set(index, opened);
      return opened;
    }
    const known = piece.id ? this.#firstWithId(piece.id) : undefined;
    if (known !== undefined) return known;
    if (piece.id || this.#last === undefined || startsAnotherCall(this.#last, piece)) {
      const next = this.#nextIndex();
      return this.#open(next, next);
    }
    return this.#last;
  }

  #open(index: number, order: number): Slot {
    const slot: Slot = {
      index,
      order,
      id: "",
      alias: "",
      name: "",
      arguments: "",
      shape: new ObjectShape(),
      extraContent: [],
    };
    this.#slots.push(slot);
    this.#taken.add(index);
    this.#highest = Math.max(this.#highest, index);
    return slot;
  }

  #nextIndex(): number {
    return this.#highest + 1;
  }

  /** Gives `slot` the id `id` (an id may grow: sent in pieces). */
  #setId(slot: Slot, id: string): void {
    if (id === slot.id) return;
    // The id it grew from names no call now, unless another call took it too.
    const before = this.#byId.get(slot.id);
    if (before !== undefined && before.slots.length === 1) this.#byId.delete(slot.id);
    slot.id = id;
    const holders = this.#byId.get(id);
    if (holders === undefined) this.#byId.set(id, { slots: [slot], head: 0 });
    else holders.slots.push(slot);
  }

  /**
   * The first call to take `id` of those that have it now (almost always the only one), in
   * time amortised constant: a payload of a million pieces naming one id must not scan every
   * call with it for each piece.
   */
  #firstWithId(id: string): Slot | undefined {
    const holders = this.#byId.get(id);
    if (holders === undefined) return undefined;
    while (holders.head < holders.slots.length && holders.slots[holders.head].id !== id) {
      holders.head++;
    }
    return holders.slots[holders.head];
  }
}

/**
 * True when `piece` starts another call than the one in `slot`: the piece opens a call as a
 * call's first piece does (its `type`, its name and an id that is not the slot's, even grown),
 * or the slot's arguments are whole already (one JSON object, or Ollama's `null` for a call
 * without parameters) and the piece brings another id, or (without an id of its own) a name
 * with arguments that open an object. A piece with the slot's own id continues it (servers
 * that repeat the id on every piece), and id pieces before any arguments are an id sent in
 * parts (`call_` + `7f3a`).
 */
function startsAnotherCall(
  slot: { id: string; alias: string; name: string; arguments: string; shape: ObjectShape },
  piece: Piece,
): boolean {
  const otherId = piece.id !== undefined && piece.id !== "" && slot.id !== "" &&
    piece.id !== slot.id && piece.id !== slot.alias;
  // Each call of a parallel reply under one index, whose arguments may be empty (no
  // parameters): nothing else tells them from pieces of one call.
  if (
    otherId && piece.type && piece.name && slot.name !== "" && !piece.id?.startsWith(slot.id)
  ) {
    return true;
  }
  const ownId = piece.id !== undefined && piece.id !== "" &&
    (piece.id === slot.id || piece.id === slot.alias);
  const opensCall = !ownId && piece.name !== undefined && piece.name !== "" &&
    piece.args?.trimStart().startsWith("{") === true;
  if (!otherId && !opensCall) return false;
  // Checked last, and parsed at most once (`ObjectShape`): a server's thousands of pieces that
  // might start another call must not parse a megabyte of arguments each.
  return slot.shape.isObject(slot.arguments) || isNullArguments(slot.arguments);
}

/** True for arguments that are JSON `null` (a short text: checking it costs nothing). */
function isNullArguments(text: string): boolean {
  return text.length <= 16 && text.trim() === "null";
}

/**
 * Whether a call's growing argument text is one whole JSON object so far, in time linear in
 * the text: the brackets are counted as pieces come (strings skipped), and the text is parsed
 * once, when first asked after they closed. Whitespace after the closing bracket changes
 * nothing, and anything else there can never make one object.
 */
class ObjectShape {
  #depth = 0;
  #started = false;
  #closed = false;
  #broken = false;
  #inString = false;
  #escaped = false;
  /** `isObject()`'s answer once the brackets closed. */
  #object: boolean | undefined;

  /** Reads `text`, appended to the arguments. */
  add(text: string): void {
    for (let i = 0; i < text.length && !this.#broken; i++) this.#read(text[i]);
  }

  /** True when `text` (all the arguments read) is one whole JSON object. */
  isObject(text: string): boolean {
    if (this.#broken || !this.#closed) return false;
    this.#object ??= argumentsObject(text) !== undefined;
    return this.#object;
  }

  #read(char: string): void {
    if (this.#closed || !this.#started) {
      if (char === " " || char === "\n" || char === "\r" || char === "\t") return;
      if (this.#closed || char !== "{") {
        this.#broken = true;
      } else {
        this.#started = true;
        this.#depth = 1;
      }
      return;
    }
    if (this.#inString) {
      if (this.#escaped) this.#escaped = false;
      else if (char === "\\") this.#escaped = true;
      else if (char === '"') this.#inString = false;
    } else if (char === '"') {
      this.#inString = true;
    } else if (char === "{" || char === "[") {
      this.#depth++;
    } else if ((char === "}" || char === "]") && --this.#depth === 0) {
      this.#closed = true;
    }
  }
}

/**
 * True when the id of `piece`, a piece of the call in `slot`, is (part of) the call's id: the
 * call has none yet, the id is the call's grown or repeated, or it comes before the arguments
 * (an id in pieces comes with the name's pieces, before the arguments). Another id with the
 * arguments is not: the first id stays, so the call and its result name one id (joined, each
 * piece's id made an id of thousands of characters, and the answer failed).
 */
function joinsId(slot: { id: string; arguments: string }, piece: Piece): boolean {
  const id = piece.id ?? "";
  if (slot.id === "" || id.startsWith(slot.id)) return true;
  return slot.arguments === "" && (Boolean(piece.name) || !piece.args);
}

/**
 * `value` (a call's id or name joined so far) when within {@linkcode MAX_CALL_FIELD_CHARS}.
 * @throws {WireFieldError} when it is longer.
 */
function withinLimit(value: string, what: "id" | "name"): string {
  if (value.length <= MAX_CALL_FIELD_CHARS) return value;
  throw new WireFieldError(
    `Cannot read model API stream event: tool call ${what} longer than ` +
      `${MAX_CALL_FIELD_CHARS} characters (the server does not follow its API)`,
  );
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
