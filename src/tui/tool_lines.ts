/**
 * How one tool call reads in the transcript: a compact line with its status and duration, the
 * permission decision under it, and for edits a coloured diff.
 */
import type { Observation } from "../core/observation.ts";
import { diffSummary, numberedDiff, unifiedDiff } from "./diff_view.ts";
import { visibleText } from "../core/terminal_text.ts";
import { cleanText, firstLine, formatDuration, oneLine, plural, spinnerFrame } from "./format.ts";
import type { Theme } from "./theme.ts";
import { truncateToWidth, visibleWidth } from "./width.ts";

/** How a permission review settled, as a `permission_decision` event reports it. */
export interface Decision {
  allow: boolean;
  by: "person" | "reviewer" | "bypass" | "policy";
  reason: string;
}

/** A tool call between `tool_start` and `tool_end`. */
export interface RunningTool {
  name: string;
  args: unknown;
  /** Clock reading at `tool_start` (the view's `now`). */
  startedAt: number;
  /** The end of the streamed output (`tool_update` text), bounded. */
  output: string;
  /** Set while a permission request waits for an answer. */
  waiting: boolean;
  /** Clock reading when the current permission request began waiting. */
  waitingSince?: number;
  /** Milliseconds spent waiting for the person's answer: not counted as the call's time. */
  waited?: number;
  decision?: Decision;
}

/** Lines of a diff shown under a finished edit or write. */
const EDIT_DIFF_LINES = 20;
const WRITE_DIFF_LINES = 12;
/** Streamed output lines shown under a running tool. */
const OUTPUT_LINES = 2;
/** Last lines of a finished command's output committed under its call line. */
const DONE_OUTPUT_LINES = 3;
/** … and under a failed one (the error usually sits at the end). */
const FAILED_OUTPUT_LINES = 8;

/**
 * What a finished command printed (stdout and stderr together), without the `exit code: N`
 * line the model gets; "" for other tools and for a command that printed nothing.
 */
export function commandOutput(observation: Observation): string {
  if (observation.status === "ERROR") {
    const at = observation.message.indexOf("output so far:\n");
    if (at < 0) return "";
    const body = observation.message.slice(at + "output so far:\n".length);
    return body === "(no output)" ? "" : body;
  }
  if (observation.details?.kind !== "command") return "";
  const body = observation.output.replace(/\n?exit code: [^\n]*$/, "");
  return body === "(no output)" ? "" : body;
}

/**
 * The most telling arguments of a call as one short line: the path, pattern or command for
 * built-in tools (paths inside `workspace` made relative), compact JSON for others. `args` are
 * as the call has them (the event cleaner leaves them as written) and are shown with
 * `visibleText()`: line breaks as `↵`, controls as `␛`, `␇`, never removed, so the line names
 * all that runs, an escape sequence's payload included.
 */
export function summarizeArgs(name: string, args: unknown, workspace: string): string {
  return visibleText(tellingArgs(name, args, workspace));
}

function tellingArgs(name: string, args: unknown, workspace: string): string {
  if (typeof args === "string") return args.slice(0, 300);
  const record = isRecord(args) ? args : {};
  const text = (key: string) => typeof record[key] === "string" ? record[key] as string : "";
  const path = (key: string) => relativeTo(workspace, text(key));
  switch (name) {
    case "read":
      if (text("path") === "") break;
      return typeof record.offset === "number" ? `${path("path")}:${record.offset}` : path("path");
    case "write":
    case "edit":
      if (text("path") === "") break;
      return path("path") + (record.replace_all === true ? " (all)" : "");
    case "list":
      return path("path") || ".";
    case "glob":
    case "grep": {
      if (text("pattern") === "") break;
      const where = text("path") === "" ? "" : ` in ${path("path")}`;
      const glob = text("glob") === "" ? "" : ` (${text("glob")})`;
      return text("pattern") + where + glob;
    }
    case "bash":
      if (text("command") === "") break;
      return text("command").slice(0, 300);
    case "request_permissions":
      return permissionAsk(record);
  }
  // Any other tool that names a file (multi_edit, an MCP tool): the file.
  if (text("path") !== "") return path("path");
  return compactJson(args);
}

/** The live lines of a running call: spinner, name, arguments, elapsed time, output tail. */
export function runningToolLines(
  tool: RunningTool,
  options: { now: number; width: number; theme: Theme; workspace: string },
): string[] {
  const { now, width, theme } = options;
  const lines = [
    callLine(
      {
        mark: theme.cyan(spinnerFrame(now)),
        name: tool.name,
        summary: summarizeArgs(tool.name, tool.args, options.workspace),
        tail: [],
        // The clock stops while the person is asked.
        duration: formatDuration(
          (tool.waitingSince ?? now) - tool.startedAt - (tool.waited ?? 0),
        ),
      },
      width,
      theme,
    ),
  ];
  if (tool.waiting) lines.push(indent(theme.yellow("? waiting for approval"), width));
  if (tool.decision) lines.push(indent(decisionText(tool.decision, theme), width));
  const output = cleanText(tool.output).split("\n").map((line) => line.trimEnd())
    .filter((line) => line !== "").slice(-OUTPUT_LINES);
  for (const line of output) lines.push(indent(theme.dim(`│ ${line}`), width));
  return lines;
}

/** The committed lines of a finished call: status line, decision, error detail, diff. */
export function finishedToolLines(
  tool: Pick<RunningTool, "name" | "args" | "decision">,
  result: { observation: Observation; durationMs: number },
  options: {
    width: number;
    theme: Theme;
    workspace: string;
    /** The number `/output` pages this call's full output with, when it is kept. */
    outputNumber?: number;
  },
): string[] {
  const { width, theme } = options;
  const obs = result.observation;
  const printed = (failed: boolean) =>
    outputTail(commandOutput(obs), failed, options.outputNumber, width, theme);
  const summary = summarizeArgs(tool.name, tool.args, options.workspace);
  const duration = formatDuration(result.durationMs);
  if (obs.status === "ERROR") {
    const denied = obs.code === "POLICY_DENIED";
    // Stopped by the person: calm, dim, with what the command printed before.
    const stopped = obs.code === "CANCELLED";
    const paint = denied ? theme.yellow : stopped ? theme.dim : theme.red;
    const label = denied
      ? "denied"
      : stopped
      ? "stopped"
      : obs.code === "TIMEOUT"
      ? "timed out"
      : obs.code.toLowerCase().replaceAll("_", " ");
    const lines = [
      callLine(
        {
          mark: paint(denied ? "⊘" : stopped ? "■" : "✗"),
          name: tool.name,
          summary,
          tail: [paint(label)],
          duration,
        },
        width,
        theme,
      ),
    ];
    if (tool.decision) lines.push(indent(decisionText(tool.decision, theme), width));
    const detail = firstLine(oneLine(obs.message.split("\n", 1)[0]));
    if (!stopped && detail !== "" && detail !== tool.decision?.reason) {
      lines.push(indent(paint(`└ ${detail}`), width));
    }
    return [...lines, ...printed(!denied && !stopped)];
  }
  const details = obs.details;
  let failed = false;
  const tail: string[] = [];
  let patch = "";
  if (details?.kind === "command" && details.exitCode !== 0) {
    failed = true;
    tail.push(theme.red(details.exitCode === null ? "killed" : `exit ${details.exitCode}`));
  } else if (details?.kind === "file") {
    const read = `${details.lines} line${details.lines === 1 ? "" : "s"}`;
    tail.push(theme.dim(`${read}${details.truncated ? " (truncated)" : ""}`));
  } else if (details?.kind === "matches") {
    const found = `${details.count} match${details.count === 1 ? "" : "es"}`;
    tail.push(theme.dim(`${found}${details.truncated ? "+" : ""}`));
  } else if (details?.kind === "diff") {
    patch = details.diff;
  } else if (details?.kind === "web") {
    tail.push(theme.dim(`${details.url} · ${details.status} · ${details.bytes} bytes`));
  } else {
    // No details (a resumed transcript): an exact replacement still shows as a diff.
    patch = editPatch(tool.args, options.workspace);
  }
  if (patch !== "" && !patch.startsWith("(")) {
    const { added, removed } = diffSummary(patch);
    tail.push(`${theme.green(`+${added}`)} ${theme.red(`-${removed}`)}`);
  } else if (wholeContent(tool.args) !== undefined) {
    tail.push(theme.green(`+${plural(lineCount(wholeContent(tool.args)!), "line")}`));
  }
  const mark = failed ? theme.red("✗") : theme.green("✓");
  const lines = [callLine({ mark, name: tool.name, summary, tail, duration }, width, theme)];
  if (tool.decision) lines.push(indent(decisionText(tool.decision, theme), width));
  lines.push(...printed(failed));
  if (patch.startsWith("(")) {
    lines.push(indent(theme.dim(oneLine(patch)), width));
  } else if (patch !== "") {
    // A whole file's content is shown shorter than a change inside a file.
    const max = wholeContent(tool.args) === undefined ? EDIT_DIFF_LINES : WRITE_DIFF_LINES;
    for (const line of numberedDiff(hunksOf(patch), Math.max(1, width - 2), theme, max)) {
      lines.push(indent(line, width));
    }
  }
  return lines;
}

/**
 * A permission decision as a short phrase: `allowed by person (once)`, dim, or
 * `denied by policy: reason`, red.
 */
export function decisionText(decision: Decision, theme: Theme): string {
  const reason = oneLine(decision.reason);
  if (decision.by === "person") {
    if (reason === "The user allowed it") return theme.dim("allowed by person (once)");
    if (reason === "The user allowed it for this session") {
      return theme.dim("allowed by person (for this session)");
    }
    if (reason === "The user denied it") return theme.red("denied by person");
    const said = /^The user denied it, saying: (.*)$/s.exec(reason);
    if (said) return theme.red(`denied by person: ${said[1]}`);
  }
  if (decision.by === "bypass") return theme.dim("allowed (review bypassed)");
  const detail = reason.replace(/^Reviewer: /, "");
  const verdict = decision.allow ? "allowed" : "denied";
  const text = `${verdict} by ${decision.by}${detail === "" ? "" : `: ${detail}`}`;
  return decision.allow ? theme.dim(text) : theme.red(text);
}

/**
 * The last lines a command printed, under its call line: a few when it succeeded, more when it
 * failed, with `… N more lines` and how to see them all when some are left out.
 */
function outputTail(
  output: string,
  failed: boolean,
  outputNumber: number | undefined,
  width: number,
  theme: Theme,
): string[] {
  const rows = cleanText(output).split("\n").map((line) => line.trimEnd());
  while (rows.length > 0 && rows.at(-1) === "") rows.pop();
  if (rows.length === 0) return [];
  const keep = failed ? FAILED_OUTPUT_LINES : DONE_OUTPUT_LINES;
  const shown = rows.slice(-keep);
  const paint = failed ? (text: string) => text : theme.dim;
  const lines: string[] = [];
  const hidden = rows.length - shown.length;
  if (hidden > 0) {
    const more = `… ${hidden} more line${hidden === 1 ? "" : "s"}`;
    const how = outputNumber === undefined ? "" : ` · Ctrl-O or /output ${outputNumber}`;
    lines.push(indent(theme.dim(`${more}${how}`), width));
  }
  for (const row of shown) lines.push(indent(`${theme.dim("│")} ${paint(row)}`, width));
  return lines;
}

interface CallLineParts {
  mark: string;
  name: string;
  summary: string;
  tail: string[];
  duration: string;
}

/**
 * `✓ read  src/a.ts  120 lines  0.1s`, the summary cut so the line fits `width`. The name is
 * the model's (a call to an unknown tool shows as called), so it is made visible like the
 * arguments: `re␛[0mad` never reads as `read`.
 */
function callLine(parts: CallLineParts, width: number, theme: Theme): string {
  const head = `${parts.mark} ${theme.bold(visibleText(parts.name))}`;
  const end = [...parts.tail, theme.dim(parts.duration)].join("  ");
  const room = width - visibleWidth(head) - visibleWidth(end) - 4;
  if (parts.summary === "" || room < 6) {
    return truncateToWidth(`${head}  ${end}`, width);
  }
  return truncateToWidth(`${head}  ${truncateToWidth(parts.summary, room)}  ${end}`, width);
}

function indent(line: string, width: number): string {
  return truncateToWidth(`  ${line}`, width);
}

/** `patch` without its `---`/`+++` file headers: the path is on the line above already. */
export function hunksOf(patch: string): string {
  const at = patch.startsWith("@@") ? 0 : patch.indexOf("\n@@");
  return at <= 0 ? patch : patch.slice(at + 1);
}

/** The `content` a call writes as a whole file, if it names one. */
function wholeContent(args: unknown): string | undefined {
  return isRecord(args) && typeof args.content === "string" ? args.content : undefined;
}

function editPatch(args: unknown, workspace: string): string {
  if (!isRecord(args)) return "";
  const { path, old_string: before, new_string: after } = args;
  if (typeof path !== "string" || typeof before !== "string" || typeof after !== "string") {
    return "";
  }
  return unifiedDiff(relativeTo(workspace, path), before, after);
}

function permissionAsk(record: Record<string, unknown>): string {
  const asks: string[] = [];
  for (const key of ["read", "write", "hosts", "env", "commands"]) {
    const value = record[key];
    if (Array.isArray(value) && value.length > 0) asks.push(`${key}: ${value.join(", ")}`);
  }
  if (record.without_sandbox === true) asks.push("without sandbox");
  const reason = typeof record.reason === "string" ? record.reason : "";
  return asks.length > 0 ? asks.join(" · ") : reason;
}

function compactJson(value: unknown): string {
  if (value === undefined) return "";
  try {
    const text = JSON.stringify(value) ?? "";
    return text === "{}" ? "" : text.slice(0, 300);
  } catch {
    return "";
  }
}

function relativeTo(workspace: string, path: string): string {
  const root = workspace.endsWith("/") ? workspace.slice(0, -1) : workspace;
  if (root === "" || !path.startsWith("/")) return path;
  if (path === root) return ".";
  return path.startsWith(`${root}/`) ? path.slice(root.length + 1) : path;
}

function lineCount(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
