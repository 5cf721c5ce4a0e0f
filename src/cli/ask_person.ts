/**
 * ASK at the terminal for one-shot runs: the request goes to stderr, the answer is one line on
 * stdin (y = once, a = for this session, anything else = deny). Only used when stdin and
 * stderr are terminals; otherwise the run is non-interactive and review denies.
 */
import { terminalText, visibleText } from "../core/terminal_text.ts";
import {
  argumentLines,
  modelReasonRows,
  requestWarnings,
  shownElsewhere,
  shownRows,
  unseenDiffWarning,
} from "../tui/arguments_text.ts";
import { plainRisk } from "../tui/risk_text.ts";
import { colorWanted } from "./process_env.ts";
import {
  allowLabel,
  type AskPerson,
  noteLabel,
  type PersonAnswer,
  type ReviewRequest,
} from "../sandbox/review.ts";
import type { ReadRefusal } from "../config/workspace_file.ts";
import type { Withheld } from "./interactive/proposed_diff.ts";

/** Where a question's diff is read: the workspace, and what tern may not read for the model. */
export interface DiffSource {
  workspace: string;
  /** The conversation's read guard, asked at each question (Conversation.readRefusal()). */
  readRefusal: () => Promise<ReadRefusal>;
}

/**
 * A terminal prompt, or undefined when stdin or stderr is not a terminal. With `diffs`, a call
 * that edits or writes a file shows its diff, with line numbers, before the question.
 */
export function terminalPerson(diffs?: DiffSource): AskPerson | undefined {
  if (!Deno.stdin.isTerminal() || !Deno.stderr.isTerminal()) return undefined;
  return async (request, signal) => {
    const diff = diffs === undefined
      ? ""
      : await proposedDiffLines(request, diffs.workspace, await diffs.readRefusal());
    return await askOnTerminal(request, signal, diff);
  };
}

/** Most diff lines shown before a question; the middle of a longer diff is elided. */
const DIFF_LINES = 40;

/**
 * The change `request` would make in `workspace` as numbered, coloured diff lines, long lines
 * wrapped to the terminal's width ("" when there is none); for a file `refuse` keeps from the
 * model (or a link out of the workspace), why there is no diff. Never throws for unreadable
 * files.
 */
export async function proposedDiffLines(
  request: ReviewRequest,
  workspace: string,
  refuse: ReadRefusal,
): Promise<string | Withheld> {
  // Loaded only when a question is asked: nothing of it before the first model request.
  const [{ proposedDiff }, diffView, { themeFor }, { hunksOf }] = await Promise.all([
    import("./interactive/proposed_diff.ts"),
    import("../tui/diff_view.ts"),
    import("../tui/theme.ts"),
    import("../tui/tool_lines.ts"),
  ]);
  await diffView.loadDiff();
  const proposed = proposedDiff(request, workspace, { refuse });
  if (proposed !== undefined && "withheld" in proposed) return proposed;
  const diff = proposed?.diff;
  if (diff === undefined || diff === "") return "";
  const columns = terminalColumns(100);
  const theme = themeFor(colorWanted(true));
  const hunks = hunksOf(diff);
  const lines = diffView.numberedDiff(hunks, columns - 2, theme, DIFF_LINES, { wrap: true });
  // The line question has no view in full: a cut diff and a change it does not draw are said.
  const all = diffView.numberedDiff(hunks, columns - 2, theme, Number.POSITIVE_INFINITY, {
    wrap: true,
  }).length;
  const warnings = [
    ...(all > lines.length
      ? [
        `The diff is cut: ${
          all - lines.length + 1
        } of its ${all} rows are not shown: deny unless you know them`,
      ]
      : []),
    ...[unseenDiffWarning(diff)].filter((warning) => warning !== undefined),
  ];
  return [...lines, ...warnings.map((warning) => theme.red(`! ${warning}`))]
    .map((line) => `  ${line}\n`).join("");
}

/**
 * A line read sooner than this after the question was written, in milliseconds, was typed
 * before it appeared, and answers nothing (as the interactive dialog drops early keys).
 */
export const TYPED_AHEAD_MS = 500;

/** Longest model's reason shown, in characters. */
const REASON_CHARS = 300;
/** Most characters of tern's reason for asking shown (it quotes the command's words). */
const RISK_CHARS = 600;

async function askOnTerminal(
  request: ReviewRequest,
  signal: AbortSignal,
  diff: string | Withheld = "",
): Promise<PersonAnswer> {
  const encoder = new TextEncoder();
  Deno.stderr.writeSync(encoder.encode(terminalQuestion(request, diff)));
  // An allowing line that comes sooner than anyone could read the question was typed before it
  // appeared (a `y` meant for something else, waiting in the terminal's buffer): it allows
  // nothing, and the question is asked again. A denial stands whenever it comes.
  const allows = (text: string) => ["y", "yes", "a", "always"].includes(text.trim().toLowerCase());
  let asked = performance.now();
  let line = await readLine(signal);
  while (allows(line) && performance.now() - asked < TYPED_AHEAD_MS) {
    Deno.stderr.writeSync(
      encoder.encode("  (a line typed before the question appeared was ignored) answer now: "),
    );
    asked = performance.now();
    line = await readLine(signal);
  }
  const answer = line.trim().toLowerCase();
  if (answer === "y" || answer === "yes") return "once";
  if (request.rememberable && (answer === "a" || answer === "always")) return "session";
  return "deny";
}

/**
 * The question as the terminal shows it. Facts first, whole and exactly (`visibleText()`:
 * controls and bidi characters made visible, never obeyed; a long command wraps, it is never
 * cut, so the arguments below can leave it out): the tool and the command or path; then the
 * policy's reason; then every argument the facts (or the diff) do not show, in full, as indented
 * JSON made visible; then the diff (or why there is none); then the model's own words, marked
 * unverified and cut short.
 */
export function terminalQuestion(
  request: ReviewRequest,
  diff: string | Withheld = "",
  columns = terminalColumns(),
): string {
  const flat = (text: string) => terminalText(text).replace(/\s+/g, " ").trim();
  const fact = visibleText(request.summary);
  const said = request.modelReason === undefined || request.modelReason.trim() === ""
    ? ""
    : modelReasonRows(
      "Model's reason (unverified):",
      cut(flat(request.modelReason), REASON_CHARS),
      columns - 2,
    ).map((row) => `  ${row}\n`).join("");
  // tern's reason quotes the call's words, a note is a rule's or hook's: each is cut short, its
  // later rows indented, so neither lines up a row of the question nor pushes the facts away.
  const reason = shownRows(cut(flat(plainRisk(request.reason).join("; ")), RISK_CHARS), columns - 2)
    .map((row) => `  ${row}\n`).join("");
  const note = request.note === undefined ? "" : modelReasonRows(
    cut(noteLabel({ ...request.note, from: cut(flat(request.note.from), REASON_CHARS) }), 400),
    cut(flat(request.note.text), REASON_CHARS),
    columns - 2,
  ).map((row) => `  ${row}\n`).join("");
  const scope = request.rememberAs === undefined ? "" : ` (${visibleText(request.rememberAs)})`;
  const session = request.rememberable ? `, [a] allow for this session${scope}` : "";
  const diffText = typeof diff === "string" ? diff : `  (no diff: ${visibleText(diff.withheld)})\n`;
  const args = argumentLines(
    request.args,
    shownElsewhere(request, typeof diff === "string" && diff !== ""),
  );
  const argText = args.length === 0
    ? ""
    : `  Arguments:\n${args.map((line) => `    ${line}\n`).join("")}`;
  const hidden = request.hiddenKeys
    ? "  ! Part of this call is hidden as a key: what is shown may not be all that runs; deny if " +
      "unsure\n"
    : "";
  const warnings = requestWarnings(request).map((warning) => `  ! ${warning}\n`).join("");
  return `\n? Allow ${
    visibleText(flat(request.tool))
  }: ${fact}\n${hidden}${warnings}${reason}${argText}${diffText}${note}` +
    `${said}` +
    `  [y] ${allowLabel(request)}${session}, [n] deny: `;
}

/** The terminal's width in cells (`fallback` when it cannot be read). */
function terminalColumns(fallback = 80): number {
  try {
    return Deno.consoleSize().columns || fallback;
  } catch {
    return fallback;
  }
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

async function readLine(signal: AbortSignal): Promise<string> {
  const buffer = new Uint8Array(1024);
  let line = "";
  const decoder = new TextDecoder();
  while (!signal.aborted) {
    const n = await Deno.stdin.read(buffer);
    if (n === null) break;
    line += decoder.decode(buffer.subarray(0, n), { stream: true });
    if (line.includes("\n")) break;
  }
  if (signal.aborted) throw new Error("cancelled");
  return line.split("\n", 1)[0];
}

/**
 * `person`, asking one question at a time: plan nodes run at once, but a terminal (or the
 * dialog of the interactive UI) shows one request at a time.
 */
export function oneAtATime(person: AskPerson | undefined): AskPerson | undefined {
  if (person === undefined) return undefined;
  let queue: Promise<unknown> = Promise.resolve();
  return (request, signal) => {
    // A question whose call was cancelled while it waited is never shown: denied.
    const asked = queue.then(() => signal.aborted ? "deny" as const : person(request, signal));
    queue = asked.catch(() => {});
    return asked;
  };
}
