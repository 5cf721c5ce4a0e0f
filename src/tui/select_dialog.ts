/** A list picker (models, sessions, tree entries) with an optional type-to-filter line. */
import type { Dialog } from "./dialog.ts";
import { visibleText } from "../core/terminal_text.ts";
import { oneLine } from "./format.ts";
import type { KeyEvent } from "./key_event.ts";
import type { Theme } from "./theme.ts";
import { padToWidth, truncateToWidth, visibleWidth } from "./width.ts";

/** One row of a picker. */
export interface SelectItem<T> {
  label: string;
  /** Shown dim after the label; filtering matches it too. */
  detail?: string;
  value: T;
}

/** A picker's title, rows and behaviour. */
export interface SelectOptions<T> {
  theme: Theme;
  title: string;
  items: Array<SelectItem<T>>;
  /** Typing narrows the list (case-insensitive substring of label and detail). Default false. */
  filterable?: boolean;
  /** Rows shown at once; default 10. */
  maxVisible?: number;
  /** Index in `items` selected first; default 0. */
  initial?: number;
}

/**
 * A list picker. Up/Down (also Ctrl-P/Ctrl-N, and j/k when not filterable), PageUp/PageDown,
 * Home/End move; typing filters when `filterable` (Backspace and Ctrl-U edit the filter);
 * Enter picks the selected item; Esc or Ctrl-C cancels with `undefined`, and so does the
 * session's end. The rows scroll in a window of `maxVisible` with `↑ N more` / `↓ N more`
 * markers.
 */
export function selectDialog<T>(options: SelectOptions<T>): Dialog<T | undefined> {
  const t = options.theme;
  const { items } = options;
  const size = Math.max(1, options.maxVisible ?? 10);
  const haystacks = items.map((item) => `${item.label} ${item.detail ?? ""}`.toLowerCase());
  let filter = "";
  let shown = items.map((_, i) => i);
  let at = Math.min(Math.max(0, options.initial ?? 0), Math.max(0, items.length - 1));
  let top = 0;

  const keepVisible = () => {
    at = Math.min(Math.max(0, at), Math.max(0, shown.length - 1));
    if (at < top) top = at;
    if (at >= top + size) top = at - size + 1;
    top = Math.min(top, Math.max(0, shown.length - size));
  };
  const refilter = (next: string) => {
    const selected = shown[at];
    filter = next;
    const needle = filter.toLowerCase();
    shown = items.map((_, i) => i).filter((i) => haystacks[i].includes(needle));
    const kept = shown.indexOf(selected);
    at = kept >= 0 ? kept : 0;
    top = 0;
    keepVisible();
  };
  keepVisible();

  const row = (index: number, selected: boolean, width: number): string => {
    const item = items[index];
    // Made visible (`visibleText`): a label that is not the person's (a session's first message,
    // a model's name from a project's config) cannot hide characters or pad itself with a run
    // of spaces to look like another row or push its detail (a session's id) off the row.
    const label = visibleText(oneLine(item.label));
    const detail = item.detail ? `  ${t.dim(visibleText(oneLine(item.detail)))}` : "";
    const text = truncateToWidth(`${selected ? "›" : " "} ${label}${detail}`, width);
    return selected && t.color ? t.inverse(padToWidth(text, width)) : text;
  };

  return {
    cancelled: undefined,
    render(width) {
      const lines = [truncateToWidth(t.bold(options.title), width)];
      if (options.filterable) {
        lines.push(
          truncateToWidth(
            filter === "" ? t.dim("filter: type to narrow") : `filter: ${filter}${t.dim("▏")}`,
            width,
          ),
        );
      }
      if (shown.length === 0) {
        lines.push(t.dim(truncateToWidth("  no matches", width)));
        return lines;
      }
      const end = Math.min(shown.length, top + size);
      if (top > 0) lines.push(t.dim(truncateToWidth(`  ↑ ${top} more`, width)));
      for (let i = top; i < end; i++) lines.push(row(shown[i], i === at, width));
      if (end < shown.length) {
        lines.push(t.dim(truncateToWidth(`  ↓ ${shown.length - end} more`, width)));
      }
      return lines.map((line) => visibleWidth(line) > width ? truncateToWidth(line, width) : line);
    },
    handle(event: KeyEvent) {
      if (event.kind === "paste") {
        if (options.filterable) refilter(filter + oneLine(event.text));
        return { done: false };
      }
      if (event.kind !== "key") return { done: false };
      const { name, ctrl, alt } = event;
      if (name === "escape" || (ctrl && name === "c")) return { done: true, value: undefined };
      if (name === "enter") {
        return shown.length === 0 ? { done: false } : { done: true, value: items[shown[at]].value };
      }
      if (name === "up" || (ctrl && name === "p")) at--;
      else if (name === "down" || (ctrl && name === "n")) at++;
      else if (name === "pageup") at -= size;
      else if (name === "pagedown") at += size;
      else if (name === "home") at = 0;
      else if (name === "end") at = shown.length - 1;
      else if (options.filterable && name === "backspace") {
        refilter([...filter].slice(0, -1).join(""));
      } else if (options.filterable && ctrl && name === "u") refilter("");
      else if (name === "space" && !ctrl && !alt && options.filterable) refilter(`${filter} `);
      else if (name === "text" && !ctrl && !alt && event.text !== undefined) {
        if (options.filterable) refilter(filter + oneLine(event.text));
        else if (event.text === "k") at--;
        else if (event.text === "j") at++;
      }
      keepVisible();
      return { done: false };
    },
  };
}
