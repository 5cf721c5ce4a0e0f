/**
 * The names MCP tools get in front of the model: `mcp__{server}__{tool}`, cut to what model
 * APIs accept (`^[A-Za-z0-9_-]{1,64}$`), collisions settled the same way whatever order the
 * servers answered in.
 */
import { fnv1aHex } from "../core/fnv.ts";

/** The longest tool name the model APIs accept. */
export const MAX_TOOL_NAME = 64;

/** One tool of one server, by the names the server uses. */
export interface ServerTool {
  server: string;
  tool: string;
}

/** The key {@linkcode exposedToolNames} uses for a server's tool. */
export function toolKey(server: string, tool: string): string {
  return `${server}\u0000${tool}`;
}

/** Whether `name` (a tool's, or a rule's pattern of one) is of the form MCP tools get. */
export function isMcpToolName(name: string): boolean {
  return name.startsWith("mcp__");
}

/** What every model-facing name of `server`'s tools starts with (`mcp__my_srv__`) before cuts. */
export function toolPrefix(server: string): string {
  return `mcp__${clean(server)}__`;
}

/**
 * True when tools of `a` and of `b` could get the same model-facing name, or a rule written for
 * one (`mcp__my_srv__*`) could match the other's: one's {@linkcode toolPrefix} starts the
 * other's (`my.srv` and `my_srv`; `a` and `a__b`, whose tool `c` is `a`'s tool `b__c`). Letters
 * are compared without case: `GitHub` beside `github` would pass its tools off as the other's,
 * to the model and to the person reading a question about one.
 */
export function namesOverlap(a: string, b: string): boolean {
  const [first, second] = [toolPrefix(a).toLowerCase(), toolPrefix(b).toLowerCase()];
  return first.startsWith(second) || second.startsWith(first);
}

/**
 * True when a rule's tool pattern with a `*` (`mcp__git*`) could match tools of `server` by a
 * part of its name only: written before the end of the server's {@linkcode toolPrefix}, after
 * some of its name. `mcp__*` (every MCP tool) and a pattern naming the server whole
 * (`mcp__github__*`) are not such.
 */
export function namedInPart(pattern: string, server: string): boolean {
  const star = pattern.indexOf("*");
  if (star < 0) return false;
  const head = pattern.slice(0, star);
  const prefix = toolPrefix(server);
  return head.length > "mcp__".length && head.length < prefix.length && prefix.startsWith(head);
}

/**
 * Assigns every (server, tool) pair its model-facing name. Characters outside `[A-Za-z0-9_-]`
 * become `_`; a name over 64 characters is cut and ends in `_` plus a hash of the full names.
 * Pairs are taken in sorted order, so when two pairs clean up to the same name the one that
 * sorts first keeps it and the other gets the hash suffix: deterministic, independent of the
 * order servers answered in.
 * @returns a map from {@linkcode toolKey} to the exposed name.
 */
export function exposedToolNames(pairs: Iterable<ServerTool>): Map<string, string> {
  const sorted = [...pairs].sort((a, b) => compare(a.server, b.server) || compare(a.tool, b.tool));
  const names = new Map<string, string>();
  const taken = new Set<string>();
  for (const { server, tool } of sorted) {
    const key = toolKey(server, tool);
    if (names.has(key)) continue;
    const base = `${toolPrefix(server)}${clean(tool)}`;
    let name = base.length <= MAX_TOOL_NAME && !taken.has(base) ? base : withHash(base, key);
    for (let n = 2; taken.has(name); n++) name = withHash(base, `${key}\u0000${n}`);
    taken.add(name);
    names.set(key, name);
  }
  return names;
}

function clean(part: string): string {
  return part.replace(/[^A-Za-z0-9_-]/g, "_");
}

function withHash(base: string, key: string): string {
  const suffix = `_${fnv1aHex(key)}`;
  return base.slice(0, MAX_TOOL_NAME - suffix.length) + suffix;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
