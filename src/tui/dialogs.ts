/**
 * Modal dialogs drawn in the live region: the permission request here, a filterable list picker
 * in select_dialog.ts. A dialog renders lines and consumes keys until it is done; it never
 * touches the terminal itself.
 */
import { allowLabel, noteLabel, type PersonReply, type ReviewRequest } from "../sandbox/review.ts";
import {
  argumentLines,
  EDIT_TEXTS,
  QUOTE_MARK,
  quotedRows,
  requestWarnings,
  shownElsewhere,
  shownInSummary,
  shownRows,
  unseenDiffWarning,
} from "./arguments_text.ts";
import type { Dialog } from "./dialog.ts";
import { capRows, factRows, hintRows, withHints } from "./dialog_rows.ts";
import { numberedDiff } from "./diff_view.ts";
import { visibleText } from "../core/terminal_text.ts";
import { oneLine } from "./format.ts";
import { plainRisk } from "./risk_text.ts";
import type { KeyEvent } from "./key_event.ts";
import type { Theme } from "./theme.ts";
import { hunksOf } from "./tool_lines.ts";
import { truncateToWidth, visibleWidth, wrapText, wrapTrimmed } from "./width.ts";

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
 * Asks whether a call may run. Facts first: the tool, then what it would touch (the command,
 * with its line breaks, or each path, host, variable and command prefix a permission request
 * names, and its scope), shown exactly (`visibleText()`: controls and bidi characters made
 * visible, never obeyed), and a path's real location when a link leads elsewhere; then why
 * tern asks, in plain words (`plainRisk`), the remaining arguments and the diff, with line
 * numbers, for edits (or why there is none: `withheld`, a file the model may not read); last
 * the model's own account of why (and a rule's or hook's note), marked unverified, each of its
 * rows behind a quote mark `│ ` so that none passes as the dialog's own, and cut to a few rows
 * so it cannot push the facts away. A fact that takes more than one row (a command's later
 * lines, a wrapped path) has its later rows behind a dim `┊ `. Then `[y] allow once  [a] allow
 * for this session  [n] deny  [r] deny with a reason` (`a` only when the request is
 * rememberable; a grant's `y` says how long it lasts: `allow for this session`), and
 * `[v] view in full` when the diff, the facts, the arguments or the model's reason were cut
 * (the key hints wrap, never cut, on a narrow screen): that view pages the
 * facts, every argument in full (indented JSON, made visible) and the whole diff, its long lines
 * wrapped. Keys: y / a / n pick at once; r opens a reason field (Enter sends the denial with
 * it, as the call's observation; Esc goes back); v pages the whole request and diff (Esc goes
 * back); left, right, up, down and Tab move the highlight, Enter picks it; Esc and Ctrl-C deny,
 * and so does the session's end while it is open. The highlight starts on "deny", so an Enter
 * typed for the editor never approves anything.
 */
export function permissionDialog(
  request: ReviewRequest,
  options: { theme: Theme; diff?: string; withheld?: string; realPaths?: readonly string[] },
): Dialog<PersonReply> {
  const t = options.theme;
  const choices: Choice<PersonReply>[] = [
    { key: "y", label: allowLabel(request), value: "once" },
    ...(request.rememberable
      ? [{ key: "a", label: "allow for this session", value: "session" as const }]
      : []),
    { key: "n", label: "deny", value: "deny" },
  ];
  const picker = choicePicker(choices, choices.length - 1, "deny" as PersonReply, t);
  let mode: "choose" | "reason" | "full" = "choose";
  let said = "";
  let top = 0;
  let elided = false;
  let page = 1;
  const hasDiff = options.diff !== undefined && options.diff !== "";
  const masked = hidesKeys(request);
  const unseen = hasDiff ? unseenDiffWarning(options.diff!) : undefined;
  const warnings = [...requestWarnings(request), ...(unseen === undefined ? [] : [unseen])];
  const diffLines = (max: number, width: number) =>
    numberedDiff(hunksOf(options.diff!), width, t, max, { wrap: true });
  // The model's description is its reason, shown as such.
  const fullArgs = argumentLines(request.args, [
    ...shownElsewhere(request, hasDiff),
    ...(request.modelReason === undefined ? [] : ["description"]),
  ]);
  const withheldLines = (width: number) =>
    hasDiff || options.withheld === undefined
      ? []
      : wrapText(t.dim(`(no diff: ${visibleText(options.withheld)})`), width);
  const reasonRows = (width: number) =>
    plainRisk(oneLine(request.reason)).flatMap((line) =>
      shownRows(line, width, riskPaint(request.reason, t))
    );
  // Words tern did not write, each row behind a quote mark: none can pass as the dialog's own.
  const quoted = (label: string, text: string, width: number) =>
    quotedRows(t.yellow(label), oneLine(text), width, { mark: t.yellow, style: t.dim });
  const noteRows = (width: number) =>
    request.note === undefined ? [] : quoted(noteLabel(request.note), request.note.text, width);
  const modelRows = (width: number) =>
    request.modelReason === undefined || request.modelReason.trim() === ""
      ? []
      : quoted("Model's reason (unverified):", request.modelReason, width);
  const fullLines = (width: number) => [
    ...factLines(request, options.realPaths ?? [], width, t, {
      max: Number.POSITIVE_INFINITY,
      masked,
      warnings,
    }),
    ...reasonRows(width),
    ...noteRows(width),
    ...modelRows(width),
    ...(fullArgs.length > 0 ? [t.bold("Arguments:")] : []),
    ...fullArgs.flatMap((line) => wrapText(t.dim(line), width)),
    ...(hasDiff ? diffLines(Number.POSITIVE_INFINITY, width) : withheldLines(width)),
  ];
  const renderFull = (width: number, height: number) => {
    const all = fullLines(width);
    // The keys wrap rather than lose their end on a narrow screen.
    const keys = hintRows(["↑ ↓ scroll", "space next page", "Esc back to the question"], width)
      .map((row) => t.dim(row));
    const rows = Number.isFinite(height) ? height : 40;
    page = Math.max(1, Math.min(all.length, rows - 1 - keys.length));
    top = Math.max(0, Math.min(top, all.length - page));
    const last = Math.min(all.length, top + page);
    return [
      rule(
        `Allow ${visibleText(request.tool)}? · lines ${top + 1}–${last} of ${all.length}`,
        width,
        t,
      ),
      ...all.slice(top, last),
      ...keys,
    ].map((line) => truncateToWidth(line, width));
  };
  return {
    cancelled: "deny",
    render(width, height = Number.POSITIVE_INFINITY) {
      if (mode === "full") return renderFull(width, height);
      // tern's reason quotes the call's words, and a note is a rule's or hook's: both are cut
      // short so that neither can push the facts off the screen ([v] shows them whole). On a
      // short screen the title, the first rows of the facts and the choices come first: what is
      // left goes to tern's reason, then the note, then the model's reason, so words of the
      // model's or a rule's can never push the call out of sight above the choices.
      const allFacts = factLines(request, options.realPaths ?? [], width, t, {
        max: Number.POSITIVE_INFINITY,
        masked,
        warnings,
      });
      // A warning (part of the call hidden, look-alike letters, a hidden host, a change the
      // diff does not draw) comes on top of the facts' fewest rows.
      const minFacts = MIN_FACT_LINES + warningRows(width, t, { masked, warnings }).length;
      // The rows the choices and their hints may take before the facts' first rows go.
      const choicesRoom = height - 1 - Math.min(minFacts, allFacts.length);
      // On a short, narrow screen the choices run on as one text, so the facts stay in sight.
      const pickerRows = (hints: string[]) => {
        const rows = withHints(picker.render(width), hints, { width, max: choicesRoom }, t);
        if (rows.length <= choicesRoom) return rows;
        const compact = withHints(picker.render(width, true), hints, { width, max: 0 }, t);
        return compact.length < rows.length ? compact : rows;
      };
      const choiceRows = (view: boolean) =>
        mode === "reason"
          ? [
            "",
            ...wrapText(`${t.bold("Reason for the model:")} ${visibleText(said)}█`, width),
            ...hintRows(["Enter denies and sends the reason", "Esc back"], width)
              .map((row) => t.dim(row)),
          ]
          : pickerRows([
            "[r] deny with a reason",
            ...(view ? ["[v] view in full"] : []),
            // The session key is a prefix: say how much more than this call it allows.
            ...(request.rememberable && request.rememberAs !== undefined
              ? [`[a] allows ${visibleText(request.rememberAs)}`]
              : []),
          ]);
      // Room for the hints with [v], which is decided after the diff: it may take a row.
      const choicesHeight = choiceRows(true).length;
      const allModelSaid = modelRows(width);
      let spare = height - 1 - choicesHeight - Math.min(minFacts, allFacts.length);
      const fit = (rows: string[], max: number, more = t.dim("…")) => {
        const shown = capRows(rows, Math.min(max, spare), more);
        const kept = shown.length === 1 && rows.length > 1 ? [] : shown;
        spare -= kept.length;
        return kept;
      };
      const allReason = reasonRows(width);
      const reason = fit(allReason, REASON_ROWS);
      const allNote = noteRows(width);
      const quotedMore = `${t.yellow(QUOTE_MARK)} ${t.dim("…")}`;
      const note = fit(allNote, REASON_LINES, quotedMore);
      const modelSaid = fit(allModelSaid, REASON_LINES, quotedMore);
      const cutShort = reason.length < allReason.length || note.length < allNote.length ||
        modelSaid.length < allModelSaid.length;
      // The facts are never cut for the arguments or the diff: those get the rows left over.
      const others = 1 + reason.length + note.length + modelSaid.length + choicesHeight;
      const facts = factLines(request, options.realPaths ?? [], width, t, {
        max: Math.max(minFacts, Math.min(FACT_LINES, height - others)),
        masked,
        warnings,
      });
      elided = cutShort || facts.length < allFacts.length;
      let room = height - others - facts.length;
      const lines = [rule(`Allow ${visibleText(request.tool)}?`, width, t), ...facts, ...reason];
      const args = argsText(request, hasDiff);
      if (!args.complete) elided = true;
      if (args.text !== "") {
        // Every row indented: an argument's name (a server's, or the model's own for a server
        // that takes any) or a long value never starts a row at column 0, where it could read
        // as tern's reason or a fact.
        const all = wrapTrimmed(args.text, Math.max(1, width - 2)).map((row) => t.dim(`  ${row}`));
        const rows = capRows(all, Math.min(ARG_LINES, room), t.dim("…"));
        if (rows.length < all.length || rows.at(-1) !== all.at(-1)) elided = true;
        lines.push(...rows);
        room -= rows.length;
      }
      const withheld = withheldLines(width);
      if (withheld.length > 0 && room >= withheld.length) {
        lines.push(...withheld);
        room -= withheld.length;
      } else if (withheld.length > 0) {
        elided = true;
      }
      if (hasDiff) {
        const all = diffLines(Number.POSITIVE_INFINITY, width);
        const max = Math.min(DIFF_LINES, room);
        if (all.length > Math.max(0, room < 2 ? 0 : max)) elided = true;
        if (room >= 2) {
          lines.push(...diffLines(max, width));
        } else if (room >= 1) {
          lines.push(t.dim("(the diff does not fit: [v] shows it)"));
        }
      }
      lines.push(...note, ...modelSaid, ...choiceRows(elided));
      return lines.map((line) => truncateToWidth(line, width));
    },
    handle(event) {
      if (event.kind === "key" && event.ctrl && event.name === "c") {
        return { done: true, value: "deny" };
      }
      if (mode === "full") {
        if (event.kind !== "key") return { done: false };
        if (
          event.name === "escape" || (event.name === "text" && /^[vq]$/i.test(event.text ?? ""))
        ) {
          mode = "choose";
        } else if (event.name === "down" || event.text === "j") top++;
        else if (event.name === "up" || event.text === "k") top = Math.max(0, top - 1);
        else if (event.name === "space" || event.text === " " || event.name === "pagedown") {
          top += page;
        } else if (event.name === "pageup") top = Math.max(0, top - page);
        return { done: false };
      }
      if (mode === "reason") {
        if (event.kind === "paste") said += oneLine(event.text);
        else if (event.kind !== "key") return { done: false };
        else if (event.name === "escape") mode = "choose";
        else if (event.name === "enter") return { done: true, value: { deny: said } };
        else if (event.name === "backspace") said = [...said].slice(0, -1).join("");
        else if (event.name === "space") said += " ";
        else if (event.name === "text" && !event.ctrl && !event.alt) said += event.text ?? "";
        return { done: false };
      }
      if (event.kind === "key" && event.name === "text" && !event.ctrl && !event.alt) {
        const key = event.text?.toLowerCase();
        if (key === "r") {
          mode = "reason";
          return { done: false };
        }
        if (key === "v" && elided) {
          mode = "full";
          top = 0;
          return { done: false };
        }
      }
      return picker.handle(event);
    },
  };
}

/** Most rows the facts of a request take; beyond them a red line says how many are hidden. */
const FACT_LINES = 14;
/** Fewest rows given to the facts, however small the terminal. */
const MIN_FACT_LINES = 3;
/** Most rows of the model's stated reason, and of a rule's or hook's note. */
const REASON_LINES = 3;
/** Most rows of tern's reason for asking (it quotes the command's words). */
const REASON_ROWS = 4;

/** The marker tern's key masker leaves where it hid text (`[REDACTED]`, `[REDACTED:secret]`). */
const KEY_MARKER = /\[REDACTED[\]:]/;

/**
 * Whether tern's key masker hid part of what the person is asked to allow. A key format takes in
 * shell syntax (`token=a1|touch$IFS~/x` is one `secret`, a private key's header everything after
 * it), so the command shown is then not the command that runs.
 */
function hidesKeys(request: ReviewRequest): boolean {
  return request.hiddenKeys === true || KEY_MARKER.test(request.summary) ||
    KEY_MARKER.test(JSON.stringify(request.args) ?? "");
}

/**
 * The warnings that head the facts: part of the call was hidden as a key, or it holds letters
 * that read as others or an address whose host is hidden (`warnings`, from `requestWarnings()`).
 */
function warningRows(
  width: number,
  t: Theme,
  options: { masked: boolean; warnings: readonly string[] },
): string[] {
  return [
    ...(options.masked
      ? wrapText(t.red("Part of this call is hidden as a key: deny if unsure"), width)
      : []),
    // A warning's later rows behind the facts' gutter: one quoting an address starts no row.
    ...options.warnings.flatMap((warning) => factRows([t.red(warning)], width, t)),
  ];
}

/**
 * The facts of a request, each exactly as given: for request_permissions one row per path,
 * host, variable and command prefix plus the scope; else the summary (the command, or the
 * tool and its path). Then the real location of paths that a link leads elsewhere. When
 * `masked` (part of the call was hidden as a key), and for each of `warnings`
 * (`requestWarnings()`), red rows say so first.
 */
function factLines(
  request: ReviewRequest,
  realPaths: readonly string[],
  width: number,
  t: Theme,
  options: { max: number; masked: boolean; warnings: readonly string[] },
): string[] {
  const rows: string[] = [...warningRows(width, t, options)];
  const grant = request.tool === "request_permissions" ? grantFacts(request.args, t) : undefined;
  if (grant === undefined) {
    // A command keeps its line breaks: each line is shown, exactly, on its own rows, every
    // line but the last ending with a dim `↵`.
    const parts = request.command ? request.summary.split("\n") : [request.summary];
    const lines = parts.map((part, i) =>
      t.bold(visibleText(part)) + (i < parts.length - 1 ? t.dim("↵") : "")
    );
    rows.push(...factRows(lines, width, t));
  } else {
    for (const [label, values, paint] of grant) {
      for (const value of values) {
        rows.push(
          ...factRows([`${paint(label.padEnd(6))} ${t.bold(visibleText(value))}`], width, t),
        );
      }
    }
  }
  for (const path of realPaths) {
    rows.push(...factRows([t.yellow(`real path: ${visibleText(path)}`)], width, t));
  }
  if (rows.length <= options.max) return rows;
  const hidden = rows.length - (options.max - 1);
  return [
    ...rows.slice(0, options.max - 1),
    t.red(`… ${hidden} more rows of this request are not shown: deny unless you know them`),
  ];
}

type Paint = (text: string) => string;

/** request_permissions' arguments as labelled facts; undefined when they are not its shape. */
function grantFacts(args: unknown, t: Theme): [string, string[], Paint][] | undefined {
  if (args === null || typeof args !== "object") return undefined;
  const fields = args as Record<string, unknown>;
  const list = (name: string) =>
    Array.isArray(fields[name]) ? (fields[name] as unknown[]).map(String) : [];
  const identity: Paint = (text) => text;
  const unsandboxed = fields.withoutSandbox === true;
  const scope = fields.scope === "session" ? "this session" : "this turn";
  return [
    ["read", list("read"), identity],
    ["write", list("write"), identity],
    ["host", list("net"), identity],
    ["env", list("env"), identity],
    [
      unsandboxed ? "run WITHOUT the sandbox:" : "run without asking:",
      list("commands"),
      unsandboxed ? t.red : identity,
    ],
    ["for", [scope], identity],
  ];
}

/** A row of `[k] label` choices with a highlight; `cancel` answers Esc and Ctrl-C. */
function choicePicker<T>(choices: Choice<T>[], initial: number, cancel: T, t: Theme) {
  let at = initial;
  const move = (by: number) => {
    at = (at + by + choices.length) % choices.length;
  };
  return {
    /**
     * The choices on one row; when they do not fit, one choice a row, each wrapped (a label is
     * never cut), or with `compact` the row wrapped as one text.
     */
    render(width: number, compact = false): string[] {
      const items = choices.map((choice, i) => {
        const text = `[${choice.key}] ${choice.label}`;
        return i === at ? (t.color ? t.inverse(` ${text} `) : `›${text} `) : ` ${text} `;
      });
      const row = items.join(" ");
      if (visibleWidth(row) <= width) return [row];
      return compact ? wrapText(row, width) : items.flatMap((item) => wrapText(item, width));
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
 * The arguments the facts do not already show, as `key: value` pairs (made visible); long
 * strings are cut, with a diff on screen the edit texts are left out, and the model's
 * description is left to its own marked row. `complete` is false when anything was cut or left
 * out that the question does not show otherwise: the [v] view then shows every argument.
 */
function argsText(request: ReviewRequest, hasDiff: boolean): { text: string; complete: boolean } {
  const { args, summary } = request;
  if (request.tool === "request_permissions") return { text: "", complete: true };
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    if (typeof args === "string" && args === summary) return { text: "", complete: true };
    const text = typeof args === "string" ? args : JSON.stringify(args) ?? "";
    return { text: visibleText(cut(text, 400)), complete: text.length <= 400 };
  }
  const pairs: string[] = [];
  let complete = true;
  for (const [name, value] of Object.entries(args)) {
    if (typeof value === "string" && summary.includes(value)) {
      if (!shownInSummary(value, summary)) complete = false;
      continue;
    }
    if (hasDiff && EDIT_TEXTS.includes(name)) continue;
    if (name === "description" && request.modelReason !== undefined) continue;
    let text: string;
    try {
      text = JSON.stringify(value) ?? "";
    } catch {
      complete = false;
      continue;
    }
    if (text.length > 120) complete = false;
    pairs.push(`${visibleText(name)}: ${visibleText(cut(text, 120))}`);
  }
  return { text: pairs.join("  "), complete };
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
