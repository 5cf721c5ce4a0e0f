/**
 * Deferred MCP tools: when the MCP servers' tool schemas would cost more than a budget of the
 * context window (by default a tenth), a request carries none of them; it carries `tool_search`,
 * whose description is a compact index (each tool's name and the first line of its
 * description), and the tools a search finds are appended to the tool list for every later
 * request of the session. What the model saw stays as it was: nothing is reordered or taken
 * back, so a provider's prompt cache stays warm.
 *
 * A deferred tool stays registered: a call of one the model has not loaded still runs (its
 * arguments are checked against its schema like any call), through the same gate.
 */
import { estimateTokens } from "../context/tokens.ts";
import type { Message } from "../core/messages.ts";
import type { ToolSpec } from "../core/tool_spec.ts";
import type { SpecView } from "../tools/registry.ts";
import type { McpTool } from "../mcp/mcp_tool.ts";

/** When MCP tools are deferred: over the budget (`auto`), always, or never. */
export type ToolSearchMode = "auto" | "always" | "never";

/** The name of the search tool, as its index and the system prompt name it. */
export const TOOL_SEARCH_NAME = "tool_search";

/** The fraction of the context window the MCP tools' schemas may take before `auto` defers. */
export const DEFER_SHARE = 0.1;

/** The longest line of the index, in characters. */
const INDEX_LINE = 120;

/**
 * The share of the deferral budget the index may take (at least {@linkcode MIN_INDEX_TOKENS}):
 * past it the index ends with how many tools it leaves out, so that thousands of tools do not
 * cost in the index what deferring their schemas saved.
 */
export const INDEX_SHARE = 0.25;
/** Servers named in the index's last line for the tools past its cut. */
const MAX_NAMED_SERVERS = 20;

/** Estimated tokens the index may always take, however small the budget. */
export const MIN_INDEX_TOKENS = 1_000;

/** Tools one search loads at most. */
export const MAX_RESULTS = 10;

/** Argument names a search result lists for one tool; the rest are counted. */
export const MAX_LISTED_ARGUMENTS = 20;
/** The longest argument name a search result shows, in characters. */
const ARGUMENT_NAME = 64;

/** The first line of what `tool_search` answers when it loaded tools. */
const LOADED_HEAD = /^Loaded (\d+) tool\(s\); /;
/** A line of that answer naming one loaded tool (names are `[A-Za-z0-9_-]{1,64}`). */
const LOADED_LINE = /^- ([A-Za-z0-9_-]{1,64}) \(/;

/** Estimated tokens of `tools`' specs, as a request sends them. */
export function specTokens(
  tools: readonly Pick<ToolSpec, "name" | "description" | "parameters">[],
): number {
  let tokens = 0;
  for (const { name, description, parameters } of tools) {
    tokens += estimateTokens(JSON.stringify({ name, description, parameters }));
  }
  return tokens;
}

/** The deferral of one conversation's MCP tools; the registry's view of its specs. */
export class DeferredTools implements SpecView {
  #mode: ToolSearchMode;
  #budget: number;
  #active = false;
  /** The MCP tools known now, by name, in name order. */
  #tools = new Map<string, McpTool>();
  /** Names the model loaded, in the order it loaded them. */
  #loaded: string[] = [];

  /** `contextWindow` in tokens: `auto` defers past {@linkcode DEFER_SHARE} of it. */
  constructor(mode: ToolSearchMode, contextWindow: number) {
    this.#mode = mode;
    this.#budget = Math.floor(contextWindow * DEFER_SHARE);
  }

  /** True once MCP tools are deferred; it stays so for the session. */
  get active(): boolean {
    return this.#active;
  }

  /** Names loaded so far, in load order. */
  get loaded(): readonly string[] {
    return this.#loaded;
  }

  /**
   * Takes the MCP tools known now (after a server started or changed its list) and decides
   * whether they are deferred: once deferred, always (turning back would reorder the list).
   * Returns {@linkcode active}.
   */
  update(tools: readonly McpTool[]): boolean {
    this.#tools = new Map(tools.map((tool) => [tool.name, tool]));
    if (!this.#active && this.#mode !== "never" && tools.length > 0) {
      this.#active = this.#mode === "always" || specTokens(tools) > this.#budget;
    }
    return this.#active;
  }

  /**
   * Loads again what `tool_search` loaded in `messages` (a resumed session's), in their order:
   * the tool list continues as the model last saw it. Names already loaded stay where they are.
   */
  restore(messages: readonly Message[]): void {
    for (const message of messages) {
      if (message.role !== "tool" || message.name !== TOOL_SEARCH_NAME) continue;
      for (const name of loadedNames(message.content)) {
        if (!this.#loaded.includes(name)) this.#loaded.push(name);
      }
    }
  }

  /** Every spec but the deferred tools not loaded; the loaded ones last, in load order. */
  specs(all: ToolSpec[]): ToolSpec[] {
    if (!this.#active) return all.filter((spec) => spec.name !== TOOL_SEARCH_NAME);
    const kept = all.filter((spec) => !this.#tools.has(spec.name));
    const byName = new Map(all.map((spec) => [spec.name, spec]));
    for (const name of this.#loaded) {
      const spec = byName.get(name);
      if (spec !== undefined && this.#tools.has(name)) kept.push(spec);
    }
    return kept;
  }

  /**
   * The names the system prompt lists, from every registered one: without the deferred tools
   * (the index names them), whether loaded or not, so the prompt stays the same as tools load.
   */
  promptNames(all: readonly string[]): string[] {
    if (!this.#active) return all.filter((name) => name !== TOOL_SEARCH_NAME);
    return all.filter((name) => !this.#tools.has(name));
  }

  /**
   * The index in `tool_search`'s description: one line per MCP tool, loaded or not (a load
   * must not change what came before it in the request), in name order, up to
   * {@linkcode INDEX_SHARE} of the budget; then a line saying how many more a search finds, and whose.
   */
  index(): string {
    if (this.#tools.size === 0) return "(none now)";
    const cap = Math.max(MIN_INDEX_TOKENS, Math.floor(this.#budget * INDEX_SHARE));
    const lines: string[] = [];
    let tokens = 0;
    for (const tool of this.#tools.values()) {
      const line = `- ${tool.name}: ${summary(tool)}`;
      tokens += estimateTokens(line) + 1;
      if (tokens > cap) break;
      lines.push(line);
    }
    const more = this.#tools.size - lines.length;
    if (more > 0) {
      // Whose they are, so a server whose tools all fell past the cut is still known to exist.
      const servers = new Map<string, number>();
      for (const tool of [...this.#tools.values()].slice(lines.length)) {
        // The server's own name: one named `github__x` must not show as `github`.
        const server = tool.server;
        servers.set(server, (servers.get(server) ?? 0) + 1);
      }
      const named = [...servers].slice(0, MAX_NAMED_SERVERS).map(([name, n]) => `${name} (${n})`);
      const rest = servers.size > MAX_NAMED_SERVERS ? ", …" : "";
      lines.push(
        `(${more} more tools not listed, of ${named.join(", ")}${rest}: search by words to find ` +
          "them)",
      );
    }
    return lines.join("\n");
  }

  /**
   * The tools matching `query` (best first, at most `limit`), loaded for every later request.
   * `select:a,b` names tools exactly; other queries score each tool's name (words of it count
   * three times) and description by the query's words.
   */
  search(query: string, limit = 5): McpTool[] {
    const max = Math.max(1, Math.min(MAX_RESULTS, Math.floor(limit)));
    const found = matches(query, [...this.#tools.values()]).slice(0, max);
    for (const tool of found) {
      if (!this.#loaded.includes(tool.name)) this.#loaded.push(tool.name);
    }
    return found;
  }
}

/**
 * What `tool_search` answers for the tools it `found` (at least one): a head line, then one line
 * per tool with its argument names and the first line of its description, flattened by
 * {@linkcode oneLine}, so the server's words can never start a line of their own (see
 * {@linkcode loadedNames}, which reads it back).
 */
export function loadedText(found: readonly McpTool[]): string {
  const lines = found.map((tool) => {
    const fields = Object.keys((tool.parameters.properties ?? {}) as Record<string, unknown>);
    const shown = fields.slice(0, MAX_LISTED_ARGUMENTS).map((field) =>
      oneLine(field, ARGUMENT_NAME)
    );
    if (fields.length > shown.length) shown.push(`and ${fields.length - shown.length} more`);
    const args = shown.length === 0 ? "no arguments" : `arguments: ${shown.join(", ")}`;
    return `- ${tool.name} (${args}): ${oneLine(tool.description.split("\n")[0], 300)}`;
  });
  return `Loaded ${found.length} tool(s); their full schemas are in your tool list from your ` +
    `next step on:\n${lines.join("\n")}`;
}

/**
 * The names a `tool_search` result (its message in a session: `SUCCEEDED`, then
 * {@linkcode loadedText}) says it loaded: only the lines tern wrote, split on line feeds alone
 * and as many as its head line counts, each a valid tool name. Anything else loads nothing.
 */
function loadedNames(content: string): string[] {
  const [status, head, ...rest] = content.split("\n");
  const count = status === "SUCCEEDED" ? Number(LOADED_HEAD.exec(head ?? "")?.[1] ?? 0) : 0;
  const names: string[] = [];
  for (const line of rest.slice(0, Math.min(count, MAX_RESULTS))) {
    const name = LOADED_LINE.exec(line)?.[1];
    if (name === undefined) break;
    names.push(name);
  }
  return names;
}

/**
 * `text` (a server's words) as one line of at most `max` characters: control characters (C0,
 * DEL, C1), line and paragraph separators and bidi controls become spaces, runs of spaces one.
 */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/[\p{Cc}\p{Zl}\p{Zp}\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, " ")
    .replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Distinct words of a query that count; the rest are ignored. */
const MAX_TERMS = 32;

/**
 * The tools `query` finds, best first. A description counts once per query word and only for
 * whole words or their start, so text stuffed with every word (or run together) scores no more
 * than an honest description that has them; among equal scores the servers take turns, so one
 * server's many tools cannot take every place.
 */
function matches(query: string, tools: McpTool[]): McpTool[] {
  const trimmed = query.trim();
  if (trimmed.toLowerCase().startsWith("select:")) {
    const names = new Set(trimmed.slice("select:".length).split(",").map((name) => name.trim()));
    return [...names].flatMap((name) => tools.find((tool) => tool.name === name) ?? []);
  }
  const exact = tools.find((tool) => tool.name === trimmed);
  if (exact !== undefined) return [exact];
  const terms = [...new Set(words(trimmed))].slice(0, MAX_TERMS);
  if (terms.length === 0) return [];
  const scored = tools.map((tool) => {
    const name = words(tool.name);
    let score = 0;
    for (const term of terms) {
      if (name.includes(term)) score += 3;
      else if (name.some((word) => word.startsWith(term))) score += 2;
      if (describedBy(tool, term)) score += 1;
    }
    return { tool, score, turn: 0 };
  }).filter((entry) => entry.score > 0);
  const byName = (a: McpTool, b: McpTool) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  scored.sort((a, b) => b.score - a.score || byName(a.tool, b.tool));
  const turns = new Map<string, number>();
  for (const entry of scored) {
    const key = `${entry.score} ${entry.tool.server}`;
    entry.turn = turns.get(key) ?? 0;
    turns.set(key, entry.turn + 1);
  }
  scored.sort((a, b) => b.score - a.score || a.turn - b.turn || byName(a.tool, b.tool));
  return scored.map((entry) => entry.tool);
}

/** Each tool's description words, distinct and sorted, kept while the server's listing is. */
const DESCRIPTION_WORDS = new WeakMap<McpTool, string[]>();

/** Whether a word of `tool`'s description starts with `term` (a binary search). */
function describedBy(tool: McpTool, term: string): boolean {
  let sorted = DESCRIPTION_WORDS.get(tool);
  if (sorted === undefined) {
    sorted = [...new Set(tool.description.toLowerCase().match(/[a-z0-9]+/g))].sort();
    DESCRIPTION_WORDS.set(tool, sorted);
  }
  let [low, high] = [0, sorted.length];
  while (low < high) {
    const middle = (low + high) >> 1;
    if (sorted[middle] < term) low = middle + 1;
    else high = middle;
  }
  return sorted[low]?.startsWith(term) ?? false;
}

function words(text: string): string[] {
  return text.toLowerCase().split(/[^a-z0-9]+/).filter((word) => word.length > 0);
}

/** The first line of the server's description, without tern's `(MCP server …)` note, cut. */
function summary(tool: McpTool): string {
  const own = tool.description.replace(/\n\(MCP server "[^"]*"\)$/, "");
  const line = own.split("\n").map((part) => part.trim()).find((part) => part !== "") ?? "";
  return oneLine(line, INDEX_LINE);
}
