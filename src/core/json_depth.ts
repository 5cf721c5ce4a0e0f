/** How deeply a tool call's arguments may nest, and walks over parsed JSON that never recurse. */

/**
 * Arrays and objects inside one another at most this deep in a tool call's arguments: far more
 * than any tool's schema needs, far less than what overflows a recursive walk (a validator,
 * a canonical form, a clone).
 */
export const MAX_ARGUMENT_DEPTH = 100;

/**
 * Whether `value` (parsed JSON) nests arrays and objects more than `max` levels deep. Walks
 * without recursion, so it never overflows the stack itself, and stops at the first path that
 * is too deep.
 */
export function nestsDeeperThan(value: unknown, max: number = MAX_ARGUMENT_DEPTH): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: next, depth } = stack.pop()!;
    if (next === null || typeof next !== "object") continue;
    if (depth + 1 > max) return true;
    const children = Array.isArray(next) ? next : Object.values(next);
    for (const child of children) {
      if (child !== null && typeof child === "object") {
        stack.push({ value: child, depth: depth + 1 });
      }
    }
  }
  return false;
}

/**
 * Returned by a {@linkcode copyJson} visitor: the value is copied as it is, an array or an
 * object with each of its items visited in turn.
 */
export const COPY: unique symbol = Symbol("copy");

/** Where a value sits: its key (an index in an array) and the array or object holding it. */
export interface JsonPlace {
  /** Undefined for the root. */
  key: string | number | undefined;
  parent: unknown;
}

/**
 * A copy of `value` (parsed JSON, an event or a session entry: plain objects and arrays) made
 * without recursion, so no depth of nesting overflows the stack. `visit` is asked for every
 * value, the root first, and returns what the copy holds in its place, or {@linkcode COPY}.
 * Keys keep their order; a `__proto__` key stays a key. Never throws but what `visit` throws.
 */
export function copyJson(
  value: unknown,
  visit: (value: unknown, place: JsonPlace) => unknown,
): unknown {
  const root: unknown[] = [undefined];
  const stack: { value: unknown; place: JsonPlace; into: object; at: string | number }[] = [
    { value, place: { key: undefined, parent: undefined }, into: root, at: 0 },
  ];
  while (stack.length > 0) {
    const { value: next, place, into, at } = stack.pop()!;
    const out = visit(next, place);
    if (out !== COPY || next === null || typeof next !== "object") {
      put(into, at, out === COPY ? next : out);
      continue;
    }
    if (Array.isArray(next)) {
      const copy: unknown[] = new Array(next.length);
      put(into, at, copy);
      for (let i = next.length - 1; i >= 0; i--) {
        stack.push({ value: next[i], place: { key: i, parent: next }, into: copy, at: i });
      }
      continue;
    }
    const copy: Record<string, unknown> = {};
    put(into, at, copy);
    const entries = Object.entries(next);
    // Placeholders first: the keys keep their order whatever order they are filled in.
    for (const [key] of entries) put(copy, key, undefined);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, item] = entries[i];
      stack.push({ value: item, place: { key, parent: next }, into: copy, at: key });
    }
  }
  return root[0];
}

/** Sets `into[at]` as an own property, `__proto__` included (JSON.parse makes it one). */
function put(into: object, at: string | number, value: unknown): void {
  if (at === "__proto__") {
    Object.defineProperty(into, at, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  } else {
    (into as Record<string | number, unknown>)[at] = value;
  }
}
