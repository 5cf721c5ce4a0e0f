/** How deeply a tool call's arguments may nest. */

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
