/** Small text formats shared by the transcript, the status line and the dialogs. */
import { terminalText } from "../core/terminal_text.ts";
import { visibleWidth } from "./width.ts";

/** Token counts: `842`, `1.2k`, `12.3k`, `123k`, `1.2M`. */
export function formatTokens(count: number): string {
  if (count < 1_000) return String(Math.round(count));
  if (count < 100_000) return `${trimZero((count / 1_000).toFixed(1))}k`;
  if (count < 1_000_000) return `${Math.round(count / 1_000)}k`;
  return `${trimZero((count / 1_000_000).toFixed(1))}M`;
}

/** Milliseconds as `0.1s`, `12.3s`, `2m05s`, `1h02m`. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, ms) / 1_000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${pad2(Math.floor(seconds % 60))}s`;
  return `${Math.floor(minutes / 60)}h${pad2(minutes % 60)}m`;
}

const SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";

/** The spinner frame to show at `ms` (any clock): one frame per 80 ms. */
export function spinnerFrame(ms: number): string {
  return SPINNER[Math.floor(Math.max(0, ms) / 80) % SPINNER.length];
}

/** The first line of `text`, without surrounding whitespace. */
export function firstLine(text: string): string {
  return text.trim().split("\n", 1)[0].trim();
}

/**
 * `text` made safe for one screen line (`terminalText()`), tabs and line breaks turned into
 * spaces.
 */
export function oneLine(text: string): string {
  return cleanText(text).replace(/\s*\n\s*/g, " ");
}

/**
 * Text from the model or a process, made safe for the screen (`terminalText()`: no escape
 * sequences, controls or bidi overrides; a carriage return starts a new line, so progress bars
 * show each state and nothing can be drawn over) with tabs expanded to two spaces.
 */
export function cleanText(text: string): string {
  return terminalText(text).replaceAll("\t", "  ");
}

/**
 * Plain `text` cut in the middle to at most `width` cells: `~/src/…/tui/view`. Keeps the
 * start and the end, which say the most about a path.
 */
export function elideMiddle(text: string, width: number): string {
  if (visibleWidth(text) <= width) return text;
  if (width <= 1) return width === 1 ? "…" : "";
  const chars = [...text];
  const room = width - 1;
  const headRoom = Math.floor(room / 2);
  let head = "";
  for (const char of chars) {
    if (visibleWidth(head + char) > headRoom) break;
    head += char;
  }
  let tail = "";
  for (let i = chars.length - 1; i >= 0; i--) {
    if (visibleWidth(chars[i] + tail) > room - visibleWidth(head)) break;
    tail = chars[i] + tail;
  }
  return `${head}…${tail}`;
}

/** `count` with a noun, singular for one: `1 round`, `3 rounds`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function trimZero(text: string): string {
  return text.endsWith(".0") ? text.slice(0, -2) : text;
}

function pad2(value: number): string {
  return String(value).padStart(2, "0");
}
