/**
 * The human projection of the event stream for one-shot runs: the answer streams to `out`,
 * one line per tool call (and the final status) goes to `err`, so `tern run … > file` keeps
 * only the answer. Every event goes through `createEventCleaner()` first (the model and tools
 * wrote its strings: no escape sequence, control or bidi override reaches the terminal); tern's
 * styling is added after. Only `raw` lets the answer through as written. A call's arguments come
 * through as written and are shown with `visibleText()`: what runs, its controls shown.
 */
import type { AgentEvent, EmitFn } from "../../core/events.ts";
import { createEventCleaner } from "../../core/terminal_events.ts";
import { screenLine, visibleText } from "../../core/terminal_text.ts";
import type { Usage } from "../../core/messages.ts";
import { formatCost } from "../../llm/model_info.ts";
import type { Theme } from "../../tui/theme.ts";
import { fallbackSlice, fallbackWidth } from "../../tui/width_fallback.ts";
import { hostFileLines } from "../../sandbox/persistence.ts";

export interface TextRendererOptions {
  out: (text: string) => void;
  err: (text: string) => void;
  style: Theme;
  /** The answer goes to `out` exactly as the model wrote it (`--raw`, for pipes). */
  raw?: boolean;
  /**
   * stderr is a terminal: long call arguments and reasons are cut to a line there. Elsewhere
   * (a file, a pipe, CI logs) nothing is ever cut.
   */
  terminal?: boolean;
  /**
   * stderr's width in cells, when it is a terminal: words tern quotes (a server's error, a
   * reviewer's reason) are cut to end on the line's first row. Left to the terminal's wrap,
   * their later rows would start at column 0, where padding could draw a line of tern's own.
   */
  columns?: () => number;
  /**
   * stdout is a terminal, where a person reads along: the answer is written as it arrives (a
   * retry voids what was shown, and stderr says so). Elsewhere (a file, a pipe) the text of each
   * model call is held until the call has finished, so only answers that stand are written: the
   * text of a call that a retry or a switch to another model voided, or that never finished (the
   * turn failed or was cancelled during it), is left out. `markdown` implies it.
   */
  outTerminal?: boolean;
  /**
   * stdout is a terminal: the answer is rendered as Markdown (headings, lists, code, tables),
   * each finished block once, with `theme`'s colours at the terminal's width. The Markdown
   * modules load with the first text, after the first request; until they have, text waits
   * (and is written as it is should something else have to be printed first). Every rendered
   * line passes `screenLine()`: colour codes only, never "conceal".
   */
  markdown?: { width: () => number; theme: Theme };
}

type MarkdownModule = typeof import("../../tui/markdown.ts");

export function createTextRenderer(options: TextRendererOptions): EmitFn {
  const { err, style } = options;
  const answer = markdownAnswer(options.out, options.markdown);
  const out = answer.write;
  const argsById = new Map<string, unknown>();
  /** Calls whose denial was already printed: their error line does not repeat it. */
  const denied = new Set<string>();
  const max = (length: number) => options.terminal ? length : Number.POSITIVE_INFINITY;
  /** `text` to quote after `before` (what the line shows ahead of it, styles aside). */
  const firstLine = (text: string, before = "") => {
    if (!options.terminal) return truncate(text, Infinity);
    // Cells as the first frame counts them: never fewer than the terminal draws (CJK is two).
    const room = Math.max(
      2,
      Math.min(120, (options.columns?.() ?? Infinity) - fallbackWidth(before)),
    );
    const line = text.split("\n", 1)[0];
    return fallbackWidth(line) <= room ? line : `${fallbackSlice(line, room - 1).text}…`;
  };
  let midLine = false;
  let thinking = false;
  /** The current model call's text, while stdout is not a terminal (see `outTerminal`). */
  let held: string | undefined = options.outTerminal || options.markdown ? undefined : "";
  const answerText = (text: string) => {
    out(text);
    midLine = !text.endsWith("\n");
  };
  const endLine = () => {
    if (answer.flush()) midLine = false;
    // Rendered Markdown always ends its lines itself.
    if (midLine && !options.markdown) options.out("\n");
    midLine = false;
    if (thinking) err("\n");
    thinking = false;
  };
  const show = (event: AgentEvent): void => {
    switch (event.type) {
      case "text_delta":
        if (thinking) err("\n");
        thinking = false;
        if (held === undefined) answerText(event.text);
        else held += event.text;
        break;
      case "assistant_message":
        // The call finished: its text stands.
        if (held) answerText(held);
        if (held !== undefined) held = "";
        break;
      case "thinking_delta":
        // Reasoning goes to stderr, dimmed: `tern run … > file` keeps only the answer. Its
        // lines after the first are indented, as in the interactive view: at column 0 the
        // model could write a line that passes for one of tern's (`• bash … ✗ denied`).
        if (!thinking) err(style.dim("thinking: "));
        thinking = true;
        err(style.dim(event.text.replaceAll("\n", "\n  ")));
        break;
      case "retry":
        endLine();
        err(
          `${style.cyan("•")} ${style.red("model call failed")}: ` +
            `${firstLine(event.reason, "• model call failed: ")}; ` +
            `retry ${event.attempt} in ${seconds(event.delayMs)}` +
            `${held === undefined ? style.dim(" (any partial answer above is void)") : ""}\n`,
        );
        if (held !== undefined) held = "";
        break;
      case "model_switch":
        endLine();
        if (held !== undefined) held = "";
        err(
          `${style.cyan("•")} ${style.red(`${event.from} failed`)}: ` +
            `${firstLine(event.reason, `• ${event.from} failed: `)}; ` +
            `switching to ${event.to}\n`,
        );
        break;
      case "tool_start":
        endLine();
        answer.preload();
        argsById.set(event.callId, event.args);
        break;
      case "tool_input":
        // A hook's rewrite: the line for the call shows what ran.
        if (argsById.has(event.callId)) argsById.set(event.callId, event.args);
        break;
      case "tool_end": {
        const obs = event.observation;
        // A denial was printed with its reason when it was decided: said once, not twice.
        const told = obs.status === "ERROR" && obs.code === "POLICY_DENIED" &&
          denied.delete(event.callId);
        const markText = obs.status === "SUCCEEDED"
          ? "✓"
          : told
          ? "✗ denied"
          : `✗ ERROR[${obs.code}]`;
        const mark = obs.status === "SUCCEEDED" ? style.green(markText) : style.red(markText);
        const call = describeCall(event.name, argsById.get(event.callId), max(80));
        const detail = obs.status === "ERROR" && !told
          ? ` ${style.dim(firstLine(obs.message, `• ${call} ${markText} `))}`
          : "";
        err(
          `${style.cyan("•")} ${call} ${mark}${detail} ${style.dim(seconds(event.durationMs))}\n`,
        );
        argsById.delete(event.callId);
        break;
      }
      case "permission_decision":
        endLine();
        if (event.by !== "person") {
          if (!event.allow) denied.add(event.callId);
          const verdict = event.allow ? style.green("allowed") : style.red("denied");
          err(
            `${style.cyan("•")} ${verdict} by ${event.by}: ` +
              `${style.dim(firstLine(event.reason, `• allowed by ${event.by}: `))}\n`,
          );
        }
        break;
      case "compaction": {
        endLine();
        const how = event.fallback
          ? style.red(`fallback summary (${
            firstLine(
              event.error ?? "the summary call failed",
              `• compacted ${plural(event.summarised, "message")}: ${event.tokensBefore} → ` +
                `${event.tokensAfter} tokens, fallback summary (`,
            )
          })`)
          : "summary";
        err(
          `${style.cyan("•")} compacted ${plural(event.summarised, "message")}: ` +
            `${event.tokensBefore} → ${event.tokensAfter} tokens, ${how}` +
            (event.imagesDropped ? `, ${plural(event.imagesDropped, "image")} dropped` : "") +
            "\n",
        );
        break;
      }
      case "background_host_files":
        endLine();
        for (const line of hostFileLines(event.hostFiles, { by: "background" })) {
          err(style.yellow(line) + "\n");
        }
        break;
      case "turn_end":
        // Text still held is from a model call that never finished: no answer.
        if (held !== undefined) held = "";
        endLine();
        for (const line of hostFileLines(event.hostFiles ?? [])) err(style.yellow(line) + "\n");
        if (event.exitReason !== "COMPLETED") {
          err(style.red(`tern: ${event.exitReason}: ${event.error ?? ""}`.trimEnd()) + "\n");
        }
        if (event.usage.inputTokens + event.usage.outputTokens > 0) {
          err(style.dim(`tern: ${usageLine(event.usage, event.cost)}`) + "\n");
        }
        break;
    }
  };
  const clean = createEventCleaner();
  return (event: AgentEvent) => {
    if (options.raw && event.type === "text_delta") show(event);
    else for (const safe of clean(event)) show(safe);
  };
}

/**
 * The answer's writer: `write` straight to `out`, or, with `markdown`, buffered and rendered a
 * finished block at a time (`splitStable`); `flush()` renders what is left and says whether it
 * wrote anything (the rendered text ends its line).
 */
function markdownAnswer(
  out: (text: string) => void,
  markdown: TextRendererOptions["markdown"],
): { write: (text: string) => void; flush: () => boolean; preload: () => void } {
  if (markdown === undefined) return { write: out, flush: () => false, preload: () => {} };
  let buffer = "";
  let module: MarkdownModule | undefined;
  let loading: Promise<void> | undefined;
  const load = () =>
    loading ??= Promise.all([
      import("../../tui/markdown.ts"),
      import("../../tui/renderers.ts").then((renderers) => renderers.loadRenderers()),
    ]).then(([loaded]) => {
      module = loaded;
      stable();
    }, () => {});
  // The same last net as the interactive display's: whatever a renderer let through, only colour
  // codes reach the terminal, never "conceal" (which would hide the question that follows).
  // Never a row that starts with one of tern's marks (the `•` of its own lines on stderr).
  const render = (text: string) =>
    module!.renderMarkdown(text, Math.max(20, markdown.width()), markdown.theme).map(screenLine)
      .join("\n");
  const stable = () => {
    const { stable, rest } = module!.splitStable(buffer);
    if (stable.trim() === "") return;
    out(render(stable) + "\n\n");
    buffer = rest;
  };
  return {
    write(text) {
      buffer += text;
      if (module) return stable();
      void load();
    },
    // A call means a later answer: the modules load while it runs, so that answer is rendered
    // even when it ends the turn at once (the run then prints what it holds as it is).
    preload: () => void load(),
    flush() {
      if (buffer === "") return false;
      const text = buffer;
      buffer = "";
      if (text.trim() === "") return false;
      out(module ? render(text) + "\n" : text.endsWith("\n") ? text : text + "\n");
      return true;
    },
  };
}

/** `12,345 tokens in (10,000 cached), 321 out (200 reasoning), $0.0123` */
export function usageLine(usage: Usage, cost: number | undefined): string {
  // Not toLocaleString: its first call starts ICU, at the end of every run.
  const n = (value: number) => String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const cached = usage.cachedTokens > 0 ? ` (${n(usage.cachedTokens)} cached)` : "";
  const reasoning = usage.reasoningTokens > 0 ? ` (${n(usage.reasoningTokens)} reasoning)` : "";
  const price = cost === undefined ? "" : `, ${formatCost(cost)}`;
  return `${n(usage.inputTokens)} tokens in${cached}, ${
    n(usage.outputTokens)
  } out${reasoning}${price}`;
}

/** Milliseconds as seconds, one unit everywhere: `0.1s`, `9.2s`. */
function seconds(ms: number): string {
  return `${(Math.max(0, ms) / 1000).toFixed(1)}s`;
}

/** `1 message`, `3 messages`. */
function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/**
 * `read src/main.ts`, `bash npm test`: the tool name and its most telling argument, with what
 * would not show (a zero-width space, a look-alike space) made visible (`⟨U+200B⟩`), so the
 * line names what ran, not what it looks like.
 */
export function describeCall(name: string, args: unknown, max = 80): string {
  const key = keyArgument(args);
  // The name is the model's too (an unknown tool's is shown as called): visible, never obeyed.
  const shown = visibleText(name);
  return key === undefined ? shown : `${shown} ${truncate(visibleText(key), max)}`;
}

function keyArgument(args: unknown): string | undefined {
  if (typeof args === "string") return args;
  if (args === null || typeof args !== "object") return undefined;
  const record = args as Record<string, unknown>;
  for (const field of ["command", "path", "pattern", "file", "url", "query"]) {
    const value = record[field];
    if (typeof value === "string") return value;
  }
  return undefined;
}

function truncate(text: string, max: number): string {
  const flat = text.replaceAll("\n", " ");
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
