/** The deterministic summary used when the summary model call fails: built from the items alone. */
import type { ContextItem, VoiceOf } from "./compaction_types.ts";
import { EMPTY_SECTION, formatSummary, parseSummary, summaryFromMessage } from "./summary.ts";
import { trimMiddle } from "./trim.ts";

/** Upper bound on a fallback summary's length, in characters. */
export const FALLBACK_SUMMARY_MAX_CHARS = 6_000;

/** Written under Decisions, which cannot be recovered without a model. */
export const NO_DECISIONS = "(not available: the summary model call failed)";

/** Tools whose successful calls change the file at their `path` argument. */
const CHANGING_TOOL = /(^|_)(write|edit|patch)/;
const MAIN_ARGUMENTS = ["path", "file_path", "command", "pattern", "query", "url"];

interface CallRecord {
  name: string;
  argument: string;
  /** `SUCCEEDED`, `ERROR[...]` or `NO RESULT`. */
  status: string;
  /** The first line of an error result. */
  error?: string;
}

/**
 * A summary in the six sections, without a model: Goal = the first user request (and later
 * requests listed), Evidence = every tool call with its main argument and status, Changes =
 * paths of successful write/edit calls, Decisions = NO_DECISIONS, Failed paths = failed calls
 * with their error line, Open items = the last request when no final answer followed it.
 * A user-role message `voiceOf` says the person did not write (a subagent's result) is no
 * request: it is listed under Evidence as what it is. Sections of earlier summaries (summary
 * items or `previousSummary`) are carried over as the oldest lines. At most
 * FALLBACK_SUMMARY_MAX_CHARS; lists keep their most recent lines.
 */
export function fallbackSummary(
  items: ContextItem[],
  previousSummary?: string,
  voiceOf?: VoiceOf,
): string {
  const texts = [previousSummary, ...items.map((item) => summaryFromMessage(item.message))]
    .filter((text): text is string => text !== undefined && text.trim() !== "");
  // The same summary may come both as an item and as `previousSummary`.
  const earlier = [...new Set(texts)].map((text) => parseSummary(text).sections);
  const carried = (name: "Goal" | "Evidence" | "Changes" | "Failed paths") =>
    earlier.flatMap((s) => (s[name] ?? "").split("\n")).filter((line) =>
      line.trim() !== "" && line.trim() !== EMPTY_SECTION
    );
  const isRequest = (message: ContextItem["message"]) =>
    message.role === "user" && summaryFromMessage(message) === undefined &&
    voiceOf?.(message.content) === undefined;
  const requests = items.flatMap(({ message }) => isRequest(message) ? [message.content] : []);
  const others = items.flatMap(({ message }) => {
    const other = message.role === "user" && summaryFromMessage(message) === undefined
      ? voiceOf?.(message.content)
      : undefined;
    return other === undefined ? [] : [`- ${other}: ${oneLine(message.content, 200)}`];
  });
  const calls = toolCalls(items);

  const goal: string[] = [];
  const earlierGoal = carried("Goal").join("\n");
  if (earlierGoal !== "") goal.push(`Earlier goal:\n${trimMiddle(earlierGoal, 600, "goal")}`);
  if (requests.length > 0) {
    goal.push(`First request:\n${trimMiddle(requests[0], 1_000, "request")}`);
  }
  const later = requests.slice(1).map((text) => `- ${oneLine(text, 200)}`);
  if (later.length > 0) goal.push(`Later requests:\n${recentLines(later, 500)}`);

  const evidence = calls.map((c) => `- ${c.name} ${quote(c.argument)}: ${c.status}`);
  const changed = new Set<string>();
  for (const call of calls) {
    if (CHANGING_TOOL.test(call.name) && call.status === "SUCCEEDED") {
      changed.add(`- ${quote(call.argument)} (${call.name})`);
    }
  }
  const failed = calls.flatMap((c) =>
    c.error === undefined ? [] : [`- ${c.name} ${quote(c.argument)}: ${oneLine(c.error, 300)}`]
  );
  const summary = formatSummary({
    "Goal": goal.join("\n"),
    "Evidence": recentLines([...carried("Evidence"), ...evidence, ...others], 1_500),
    "Changes": recentLines([...carried("Changes"), ...changed], 700),
    "Decisions": NO_DECISIONS,
    "Failed paths": recentLines([...carried("Failed paths"), ...failed], 900),
    "Open items": openRequest(items, isRequest),
  });
  return trimMiddle(summary, FALLBACK_SUMMARY_MAX_CHARS, "summary");
}

function toolCalls(items: ContextItem[]): CallRecord[] {
  const results = new Map<string, string>();
  for (const { message } of items) {
    if (message.role === "tool") results.set(message.toolCallId, message.content);
  }
  return items.flatMap(({ message }) =>
    message.role !== "assistant" ? [] : (message.toolCalls ?? []).map((call) => {
      const record: CallRecord = {
        name: call.name,
        argument: mainArgument(call.arguments),
        status: "NO RESULT",
      };
      const result = results.get(call.id);
      if (result === undefined) return record;
      const firstLine = result.split("\n", 1)[0];
      if (firstLine.startsWith("ERROR")) {
        record.status = /^ERROR(\[[A-Z_]+\])?/.exec(firstLine)?.[0] ?? "ERROR";
        record.error = firstLine;
      } else {
        record.status = "SUCCEEDED";
      }
      return record;
    })
  );
}

/** The argument that says what a call was about: its path, command, pattern... */
function mainArgument(raw: string): string {
  let args: unknown;
  try {
    args = JSON.parse(raw);
  } catch {
    return oneLine(raw, 120);
  }
  if (typeof args !== "object" || args === null) return oneLine(raw, 120);
  const record = args as Record<string, unknown>;
  const key = MAIN_ARGUMENTS.find((k) => typeof record[k] === "string") ??
    Object.keys(record).find((k) => typeof record[k] === "string");
  return key === undefined ? oneLine(raw, 120) : oneLine(String(record[key]), 200);
}

/** The last user request when no assistant answer without tool calls came after it. */
function openRequest(
  items: ContextItem[],
  isRequest: (message: ContextItem["message"]) => boolean,
): string {
  for (let i = items.length - 1; i >= 0; i--) {
    const { message } = items[i];
    if (message.role === "assistant" && (message.toolCalls ?? []).length === 0) {
      if (message.content.trim() !== "") return EMPTY_SECTION;
    } else if (isRequest(message)) {
      return `- Unfinished request: ${oneLine(message.content, 500)}`;
    }
  }
  return EMPTY_SECTION;
}

/** The last lines that fit in `maxChars`, with a line saying how many earlier ones were left out. */
function recentLines(lines: string[], maxChars: number): string {
  const kept: string[] = [];
  let used = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = oneLine(lines[i], maxChars - 40);
    if (used + line.length + 1 > maxChars - 40) break;
    kept.unshift(line);
    used += line.length + 1;
  }
  const omitted = lines.length - kept.length;
  return [...(omitted > 0 ? [`- (${omitted} earlier omitted)`] : []), ...kept].join("\n");
}

function oneLine(text: string, maxChars: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= maxChars ? flat : `${flat.slice(0, Math.max(0, maxChars - 1))}…`;
}

function quote(text: string): string {
  return "`" + text.replaceAll("`", "'") + "`";
}
