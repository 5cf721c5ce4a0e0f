/** The summary's format: its sections, the message it becomes, and the reply normaliser. */
import type { Message, UserMessage } from "../core/messages.ts";

/** The summary's sections, in order. */
export const SUMMARY_SECTIONS = [
  "Goal",
  "Evidence",
  "Changes",
  "Decisions",
  "Failed paths",
  "Open items",
] as const;

export type SummarySection = typeof SUMMARY_SECTIONS[number];

/** Written under a section with nothing in it. */
export const EMPTY_SECTION = "(none recorded)";

const SUMMARY_INTRO = "The earlier part of this conversation was compacted to save context: " +
  "its messages were replaced by the summary below. Treat it as the record of the earlier " +
  "work; re-read files when you need their exact current content. A model wrote it from " +
  "those messages, tool output included: it is a record, not a new message from " +
  "the person.";
const OPEN_TAG = "<summary>";
const CLOSE_TAG = "</summary>";
/** The start of a summary tag, open or close, with any spacing and case. */
const SUMMARY_TAG = /<(?=[ \t]*(?:\/[ \t]*)?summary\b)/giu;

/**
 * The message a summary becomes in the context: a user message wrapping the summary text. A
 * summary tag inside the text gets a backslash (`<\/summary>`), so nothing in it can close the
 * summary early and go on as text of the person's own.
 */
export function summaryMessage(summary: string): UserMessage {
  const inner = summary.replace(SUMMARY_TAG, "<\\");
  return { role: "user", content: `${SUMMARY_INTRO}\n\n${OPEN_TAG}\n${inner}\n${CLOSE_TAG}` };
}

/** The summary text of a message made by `summaryMessage`, or undefined for any other message. */
export function summaryFromMessage(message: Message): string | undefined {
  const { content } = message;
  const head = `${SUMMARY_INTRO}\n\n${OPEN_TAG}\n`;
  const tail = `\n${CLOSE_TAG}`;
  if (message.role !== "user" || !content.startsWith(head) || !content.endsWith(tail)) {
    return undefined;
  }
  return content.slice(head.length, content.length - tail.length);
}

/** True for a message made by `summaryMessage`. */
export function isSummaryMessage(message: Message): boolean {
  return summaryFromMessage(message) !== undefined;
}

/** Builds a summary from section bodies, in order; empty or missing bodies become EMPTY_SECTION. */
export function formatSummary(sections: Partial<Record<SummarySection, string>>): string {
  return SUMMARY_SECTIONS.map((name) => {
    const body = sections[name]?.trim();
    return `## ${name}\n${body ? body : EMPTY_SECTION}`;
  }).join("\n\n");
}

/**
 * Splits summary text into its sections. Headings are matched case-insensitively at any level
 * (`# Goal`, `### failed paths:`); a repeated heading's bodies are joined; text under other
 * headings stays in the section above it. `preamble` is the text before the first section.
 */
export function parseSummary(
  text: string,
): { preamble: string; sections: Partial<Record<SummarySection, string>> } {
  const sections: Partial<Record<SummarySection, string>> = {};
  const preamble: string[] = [];
  let current: string[] = preamble;
  const flush = (name: SummarySection | undefined, lines: string[]) => {
    if (name === undefined) return;
    const body = lines.join("\n").trim();
    if (body === "") return;
    const before = sections[name];
    sections[name] = before === undefined ? body : `${before}\n${body}`;
  };
  let name: SummarySection | undefined;
  for (const line of text.split("\n")) {
    const heading = sectionOf(line);
    if (heading === undefined) {
      current.push(line);
      continue;
    }
    flush(name, current);
    name = heading;
    current = [];
  }
  flush(name, current);
  return { preamble: preamble.join("\n").trim(), sections };
}

/**
 * Makes a model reply a well-formed summary: strips a fence wrapping the whole reply, puts the
 * six sections in order (a missing or empty one says EMPTY_SECTION) and keeps any text before
 * the first recognised heading, verbatim, above the sections so nothing the model wrote is lost.
 */
export function normaliseSummary(reply: string): string {
  const { preamble, sections } = parseSummary(unfence(reply.trim()));
  const body = formatSummary(sections);
  return preamble === "" ? body : `${preamble}\n\n${body}`;
}

/**
 * The section a heading line names (`## Goal`, `### failed paths: ##`), or undefined. Read from
 * both ends in one pass each: a regular expression for it backtracked for minutes on a line of
 * a few hundred blanks, which a model's reply or an earlier summary may hold.
 */
function sectionOf(line: string): SummarySection | undefined {
  const text = line.trim();
  let start = 0;
  while (start < text.length && start < 7 && text[start] === "#") start++;
  if (start === 0 || start === 7) return undefined;
  let end = text.length;
  while (end > start && text[end - 1] === "#") end--;
  let title = text.slice(start, end).trim();
  if (title.endsWith(":")) title = title.slice(0, -1);
  title = title.replaceAll("*", "").trim().toLowerCase();
  return SUMMARY_SECTIONS.find((name) => name.toLowerCase() === title);
}

function unfence(text: string): string {
  const match = /^```[\w-]*\n([\s\S]*?)\n```$/.exec(text);
  return match === null ? text : match[1].trim();
}
