/**
 * Modal dialogs drawn in the live region: the permission request, a yes/no confirmation and
 * (in select_dialog.ts) a filterable list picker. A dialog renders lines and consumes keys
 * until it is done; it never touches the terminal itself.
 */
import type { PersonAnswer, ReviewRequest } from "../sandbox/review.ts";
import { renderDiff } from "./diff_view.ts";
import { oneLine } from "./format.ts";
import type { KeyEvent } from "./key_event.ts";
import type { Theme } from "./theme.ts";
import { hunksOf } from "./tool_lines.ts";
import { truncateToWidth, visibleWidth, wrapText } from "./width.ts";

export { selectDialog, type SelectItem, type SelectOptions } from "./select_dialog.ts";

/** A dialog: `render` on every frame, `handle` for every key until it says it is done. */
export interface Dialog<T> {
  /** Lines of at most `width` cells. */
  render(width: number): string[];
  handle(event: KeyEvent): { done: true; value: T } | { done: false };
}

/** Most diff lines a permission dialog shows. */
const DIFF_LINES = 20;
/** Most lines of arguments a permission dialog shows. */
const ARG_LINES = 3;

interface Choice<T> {
  key: string;
  label: string;
  value: T;
}

/**
 * Asks whether a call may run: the tool and its summary, the reason (with the risk label), the
 * remaining arguments, the diff for edits, and `[y] allow once  [a] allow for this session
 * [n] deny` (`a` only when the request is rememberable). Keys: y / a / n pick at once; left,
 * right, up, down and Tab move the highlight, Enter picks it; Esc and Ctrl-C deny. The
 * highlight starts on "deny", so an Enter typed for the editor never approves anything.
 */
export function permissionDialog(
  request: ReviewRequest,
  options: { theme: Theme; diff?: string },
): Dialog<PersonAnswer> {
  const t = options.theme;
  const choices: Choice<PersonAnswer>[] = [
    { key: "y", label: "allow once", value: "once" },
    ...(request.rememberable
      ? [{ key: "a", label: "allow for this session", value: "session" as const }]
      : []),
    { key: "n", label: "deny", value: "deny" },
  ];
  const picker = choicePicker(choices, choices.length - 1, "deny", t);
  return {
    render(width) {
      const lines = [
        rule(`Allow ${request.tool}?`, width, t),
        ...wrapText(t.bold(oneLine(request.summary)), width),
        ...wrapText(riskPaint(request.reason, t)(oneLine(request.reason)), width),
      ];
      const args = argsText(request.args, request.summary, options.diff !== undefined);
      if (args !== "") {
        const rows = wrapText(t.dim(args), width);
        lines.push(
          ...rows.length > ARG_LINES ? [...rows.slice(0, ARG_LINES - 1), t.dim("…")] : rows,
        );
      }
      if (options.diff !== undefined && options.diff !== "") {
        lines.push(...renderDiff(hunksOf(options.diff), width, t, DIFF_LINES));
      }
      lines.push("", ...picker.render(width));
      return lines.map((line) => truncateToWidth(line, width));
    },
    handle: picker.handle,
  };
}

/**
 * A yes/no question. `y` / `n` answer at once, arrows and Tab move, Enter picks the
 * highlighted answer (`initial`, default no), Esc and Ctrl-C answer no.
 */
export function confirmDialog(options: {
  theme: Theme;
  title: string;
  message?: string;
  yes?: string;
  no?: string;
  initial?: boolean;
}): Dialog<boolean> {
  const t = options.theme;
  const choices: Choice<boolean>[] = [
    { key: "y", label: options.yes ?? "yes", value: true },
    { key: "n", label: options.no ?? "no", value: false },
  ];
  const picker = choicePicker(choices, options.initial === true ? 0 : 1, false, t);
  return {
    render(width) {
      const lines = [rule(options.title, width, t)];
      if (options.message) lines.push(...wrapText(options.message, width));
      lines.push("", ...picker.render(width));
      return lines.map((line) => truncateToWidth(line, width));
    },
    handle: picker.handle,
  };
}

/** A row of `[k] label` choices with a highlight; `cancel` answers Esc and Ctrl-C. */
function choicePicker<T>(choices: Choice<T>[], initial: number, cancel: T, t: Theme) {
  let at = initial;
  const move = (by: number) => {
    at = (at + by + choices.length) % choices.length;
  };
  return {
    render(width: number): string[] {
      const items = choices.map((choice, i) => {
        const text = `[${choice.key}] ${choice.label}`;
        return i === at ? (t.color ? t.inverse(` ${text} `) : `›${text} `) : ` ${text} `;
      });
      const row = items.join(" ");
      return visibleWidth(row) <= width ? [row] : items;
    },
    handle(event: KeyEvent): { done: true; value: T } | { done: false } {
      if (event.kind !== "key") return { done: false };
      if (event.name === "escape" || (event.ctrl && event.name === "c")) {
        return { done: true, value: cancel };
      }
      if (event.name === "text" && !event.ctrl && !event.alt) {
        const chosen = choices.find((choice) => choice.key === event.text?.toLowerCase());
        return chosen ? { done: true, value: chosen.value } : { done: false };
      }
      if (event.name === "enter") return { done: true, value: choices[at].value };
      if (event.name === "left" || event.name === "up") move(-1);
      else if (event.name === "tab") move(event.shift ? -1 : 1);
      else if (event.name === "right" || event.name === "down") move(1);
      return { done: false };
    },
  };
}

/** Red for the gravest risks (the policy's labels lead its reasons), yellow for the rest. */
function riskPaint(reason: string, t: Theme): (text: string) => string {
  return /^(destructive|privileged)\b|WITHOUT a sandbox/.test(reason) ? t.red : t.yellow;
}

/** `─ Title ──────…` across the width. */
function rule(title: string, width: number, t: Theme): string {
  const head = `─ ${title} `;
  const fill = Math.max(0, width - visibleWidth(head));
  return truncateToWidth(t.bold(head) + t.dim("─".repeat(fill)), width);
}

/**
 * The arguments the summary does not already show, as `key: value` pairs; long strings are
 * cut, and with a diff on screen the edit texts are left out.
 */
function argsText(args: unknown, summary: string, hasDiff: boolean): string {
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    return typeof args === "string" && !summary.includes(args) ? oneLine(args).slice(0, 400) : "";
  }
  const pairs: string[] = [];
  for (const [name, value] of Object.entries(args)) {
    if (typeof value === "string" && summary.includes(value)) continue;
    if (hasDiff && ["old_string", "new_string", "content"].includes(name)) continue;
    let text: string;
    try {
      text = typeof value === "string" ? JSON.stringify(cut(value, 80)) : JSON.stringify(value);
    } catch {
      continue;
    }
    pairs.push(`${name}: ${oneLine(cut(text ?? "", 120))}`);
  }
  return pairs.join("  ");
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
