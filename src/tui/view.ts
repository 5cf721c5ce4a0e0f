/**
 * The transcript as a projection of agent events. Each call returns the lines that are now
 * finished, for the caller to write into scrollback once; what is still changing (streaming
 * text, thinking, running tools, queued messages) is drawn by `live()` on every frame.
 */
import { codePointCount, cutBack } from "../core/code_points.ts";
import type { AgentEvent } from "../core/events.ts";
import { visibleText } from "../core/terminal_text.ts";
import { hostFileLines } from "../sandbox/persistence.ts";
import { userVoice, voiceLine } from "../session/voice.ts";
import { compactionText, footerText, liveRetryText, retryText, switchText } from "./event_lines.ts";
import { cleanText, formatDuration, oneLine } from "./format.ts";
import { liveMarkdown } from "./live_text.ts";
import { renderMarkdown, splitStable } from "./markdown.ts";
import type { Theme } from "./theme.ts";
import {
  commandOutput,
  type Decision,
  decisionText,
  finishedToolLines,
  type RunningTool,
  runningToolLines,
  summarizeArgs,
} from "./tool_lines.ts";
import { truncateToWidth, widthEpoch, wrapText, wrapTrimmed } from "./width.ts";

/** Blocks of one kind sit together; a blank line separates blocks of different kinds. */
type Group = "user" | "text" | "activity" | "footer";

/** A committed block as `renderer()` draws it again. */
interface MadeBlock {
  /** A blank line before it (the kind of block changed). */
  gap: boolean;
  render: (width: number) => string[];
}

/** Most lines of streaming text shown live, the `… N lines above` marker included. */
const LIVE_TEXT_LINES = 12;
/** Lines of streaming thinking shown live under its header. */
const LIVE_THINKING_LINES = 3;
/** Characters of tool output kept for the live tail. */
const OUTPUT_KEEP = 4_000;
/** Finished commands whose whole output `output()` keeps for paging. */
const OUTPUTS_KEPT = 50;
/**
 * Most lines and characters of a person's message the transcript draws: a pasted log of
 * megabytes would take seconds to wrap and bury the scrollback; the rest is counted.
 */
const MESSAGE_LINES_SHOWN = 200;
const MESSAGE_CHARS_SHOWN = 20_000;

/** A finished command's whole output (as the model got it, sanitized), kept for `/output`. */
export interface KeptOutput {
  /** 1 for the session's first command with output, then counting up. */
  number: number;
  /** The call as its line shows it: `bash  seq 1 300`. */
  call: string;
  text: string;
}

/** What a `TranscriptView` needs: its colours, the workspace root and a clock. */
export interface TranscriptViewOptions {
  theme: Theme;
  /** Absolute workspace root: paths inside it are shown relative. */
  workspace: string;
  /** Milliseconds on any monotonic clock; default `performance.now()`. */
  now?: () => number;
}

/** Agent events → finished scrollback lines plus a small live region. Never throws. */
export class TranscriptView {
  #theme: Theme;
  #workspace: string;
  #now: () => number;
  #lastGroup: Group | undefined;
  #turnStartedAt: number | undefined;
  /** Milliseconds of this turn spent waiting for the person's answers. */
  #turnWaited = 0;
  /** Lines of output the commands the person stopped this turn had printed. */
  #stoppedLines = 0;
  /** Assistant text of this round not yet committed (the unfinished Markdown block). */
  #pending = "";
  /** Whether this round streamed any text (committed or pending). */
  #roundText = false;
  /** Whether part of this round's text is already in scrollback. */
  #roundCommitted = false;
  #thinking = "";
  #thinkingSince: number | undefined;
  #tools = new Map<string, RunningTool>();
  #queued: string[] = [];
  /** The retry being waited for, shown live. */
  #retry: { event: Extract<AgentEvent, { type: "retry" }>; at: number } | undefined;
  #outputs: KeptOutput[] = [];
  #outputCount = 0;
  #liveText: { text: string; width: number; epoch: number; lines: string[] } | undefined;
  /** The blocks the last `apply`, `user`, `notice` or `steered` call committed, for `blocks()`. */
  #made: MadeBlock[] = [];

  constructor(options: TranscriptViewOptions) {
    this.#theme = options.theme;
    this.#workspace = options.workspace;
    this.#now = options.now ?? (() => performance.now());
  }

  /**
   * Consumes one event and returns the lines it finished (each at most `width` cells). A
   * `steering` event returns what `steered()` would: do not call both for one message.
   */
  apply(event: AgentEvent, width: number): string[] {
    this.#made = [];
    const t = this.#theme;
    // A retry waits on one live line; whatever comes next ends the wait.
    if (event.type !== "retry") this.#retry = undefined;
    switch (event.type) {
      case "turn_start":
        this.#turnStartedAt = this.#now();
        this.#turnWaited = 0;
        this.#stoppedLines = 0;
        return [];
      case "round_start":
        this.#pending = "";
        this.#roundText = false;
        this.#roundCommitted = false;
        return [];
      case "thinking_delta":
        this.#thinkingSince ??= this.#now();
        this.#thinking += event.text;
        return [];
      case "text_delta":
        return [...this.#endThinking(width), ...this.#stream(event.text, width)];
      case "assistant_message": {
        const out = this.#endThinking(width);
        const text = this.#roundText ? this.#pending : event.message.content;
        this.#pending = "";
        this.#roundText = true;
        return [...out, ...this.#commitText(text, width)];
      }
      case "retry":
        if (!this.#roundCommitted) {
          // Nothing to void: the retry is live only, updated in place until the next try.
          this.#discardThinking();
          this.#pending = "";
          this.#roundText = false;
          this.#retry = { event, at: this.#now() };
          return [];
        }
        // falls through: committed text is void, which scrollback must say.
      case "model_switch": {
        // The failed call's partial text is void: what is live goes, what is committed stays.
        const voided = this.#roundCommitted;
        this.#discardThinking();
        this.#pending = "";
        this.#roundText = false;
        this.#roundCommitted = false;
        const line = event.type === "retry"
          ? retryText(event, voided, t)
          : switchText(event, voided, t);
        return this.#block("activity", width, (w) => this.#wrap(line, w));
      }
      case "tool_start": {
        const out = [...this.#endThinking(width), ...this.#flushText(width)];
        this.#tools.set(event.callId, {
          name: event.name,
          args: event.args,
          startedAt: this.#now(),
          output: "",
          waiting: false,
        });
        return out;
      }
      case "tool_input": {
        const tool = this.#tools.get(event.callId);
        if (tool) tool.args = event.args;
        return [];
      }
      case "tool_update": {
        const tool = this.#tools.get(event.callId);
        if (tool) tool.output = (tool.output + event.text).slice(-OUTPUT_KEEP);
        return [];
      }
      case "permission_request": {
        const tool = this.#tools.get(event.callId);
        if (tool) {
          tool.waiting = true;
          tool.waitingSince ??= this.#now();
          return [];
        }
        // The summary is what runs, as written (the event cleaner leaves it): shown, not obeyed.
        const line = `? ${visibleText(event.name)} ${visibleText(event.summary)}: ${
          oneLine(event.reason)
        }`;
        return this.#block("activity", width, (w) => [truncateToWidth(t.yellow(line), w)]);
      }
      case "permission_decision":
        return this.#decide(event, width);
      case "tool_end": {
        const tool = this.#tools.get(event.callId) ?? { name: event.name, args: undefined };
        this.#tools.delete(event.callId);
        // Time spent waiting for the person's answer is not the tool's.
        const waited = "waited" in tool ? tool.waited ?? 0 : 0;
        const durationMs = Math.max(0, event.durationMs - waited);
        if (event.observation.status === "ERROR" && event.observation.code === "CANCELLED") {
          this.#stoppedLines += lineCount(commandOutput(event.observation));
        }
        const outputNumber = this.#keep(tool, commandOutput(event.observation));
        const workspace = this.#workspace;
        return this.#block(
          "activity",
          width,
          (w) =>
            finishedToolLines(tool, { ...event, durationMs }, {
              width: w,
              theme: t,
              workspace,
              outputNumber,
            }),
        );
      }
      case "steering":
        return this.steered(event.text, width);
      case "compaction": {
        const text = compactionText(event, t);
        return this.#block("activity", width, (w) => this.#wrap(text, w));
      }
      case "background_host_files":
        return this.#hostFiles(hostFileLines(event.hostFiles, { by: "background" }), width);
      case "turn_end":
        return this.#endTurn(event, width);
      default:
        return [];
    }
  }

  /** The person's message as a committed block: `› text`, bold. */
  user(text: string, width: number): string[] {
    this.#made = [];
    const t = this.#theme;
    return this.#block("user", width, (w) => this.#message(t.cyan("› "), text, w));
  }

  /** A committed notice: info dim, warning yellow, error red. */
  notice(text: string, kind: "info" | "warning" | "error", width: number): string[] {
    this.#made = [];
    const t = this.#theme;
    const [mark, paint] = kind === "info"
      ? ["• ", t.dim]
      : kind === "warning"
      ? ["! ", t.yellow]
      : ["✗ ", t.red];
    return this.#block("activity", width, (w) => this.#prefixed(paint(mark), text, w, paint));
  }

  /**
   * The blocks the last `apply`, `user`, `notice` or `steered` call returned, in order, each
   * drawn again at any width from its source (Markdown, the tool's result, the message): for
   * the screen to re-render the blocks still visible after a resize. At the call's width they
   * give exactly the lines it returned, blank separators included.
   */
  blocks(): Array<(width: number) => string[]> {
    return this.#made.map(({ gap, render }) => (width) => {
      const lines = render(width);
      return lines.length > 0 && gap ? ["", ...lines] : lines;
    });
  }

  /**
   * A kept command output: number `n`, or the latest when `n` is undefined; undefined when
   * there is none (never had output, or older than the last 50).
   */
  output(n?: number): KeptOutput | undefined {
    return n === undefined ? this.#outputs.at(-1) : this.#outputs.find((o) => o.number === n);
  }

  #keep(tool: { name: string; args: unknown }, text: string): number | undefined {
    if (text.trim() === "") return undefined;
    const number = ++this.#outputCount;
    const call = `${visibleText(tool.name)}  ${
      summarizeArgs(tool.name, tool.args, this.#workspace)
    }`;
    this.#outputs.push({ number, call, text });
    if (this.#outputs.length > OUTPUTS_KEPT) this.#outputs.shift();
    return number;
  }

  /** Sets the steering messages waiting for the next model boundary (shown live). */
  queued(texts: string[]): void {
    this.#queued = [...texts];
  }

  /** The committed block for a queued message that was just injected; drops it from the queue. */
  steered(text: string, width: number): string[] {
    this.#made = [];
    const t = this.#theme;
    // What tern gave the model as a message (a subagent's answer, a Stop hook's reason) is one
    // line of tern's, never drawn as the person's `⏎` message.
    const voice = userVoice(text);
    if (voice.from !== "person") {
      const line = t.dim(voiceLine(voice));
      return this.#block("activity", width, (w) => [truncateToWidth(line, w)]);
    }
    const at = this.#queued.indexOf(text);
    if (at >= 0) this.#queued.splice(at, 1);
    return this.#block("user", width, (w) => this.#message(t.cyan("⏎ "), text, w));
  }

  /** The live region: thinking, streaming text, running tools, queued messages. */
  live(width: number): string[] {
    const t = this.#theme;
    const blocks: Array<[Group, string[]]> = [];
    if (this.#thinkingSince !== undefined) {
      const elapsed = formatDuration(this.#now() - this.#thinkingSince);
      blocks.push(["activity", [t.dim(`✻ thinking ${elapsed}`), ...this.#thinkingTail(width)]]);
    }
    if (this.#pending.trim() !== "") {
      const gap = this.#roundCommitted && this.#lastGroup === "text" ? [""] : [];
      blocks.push(["text", [...gap, ...this.#liveTextLines(width)]]);
    }
    const now = this.#now();
    for (const tool of this.#tools.values()) {
      const options = { now, width, theme: t, workspace: this.#workspace };
      blocks.push(["activity", runningToolLines(tool, options)]);
    }
    if (this.#retry !== undefined) {
      const { event, at } = this.#retry;
      const left = Math.max(0, event.delayMs - (now - at));
      blocks.push(["activity", [t.dim(liveRetryText(event, left))]]);
    }
    if (this.#queued.length > 0) {
      blocks.push([
        "activity",
        this.#queued.map((text, i) => {
          // The hint first, so a long message never cuts it off.
          const hint = i === this.#queued.length - 1 ? " (↑ edits)" : "";
          return truncateToWidth(t.dim(`⏎ queued${hint}: ${oneLine(text)}`), width);
        }),
      ]);
    }
    const lines: string[] = [];
    let last = this.#lastGroup;
    for (const [group, block] of blocks) {
      if (last !== undefined && last !== group) lines.push("");
      lines.push(...block);
      last = group;
    }
    return lines.map((line) => truncateToWidth(line, width));
  }

  /** Forgets everything live (after an abort): streaming text, thinking, tools, the queue. */
  reset(): void {
    this.#pending = "";
    this.#roundText = false;
    this.#roundCommitted = false;
    this.#discardThinking();
    this.#tools.clear();
    this.#queued = [];
    this.#retry = undefined;
    this.#liveText = undefined;
  }

  #stream(text: string, width: number): string[] {
    const before = this.#pending;
    this.#pending += text;
    this.#roundText = true;
    // A cut is decided at a line's end or its first character, never inside a line: a long
    // paragraph streamed in small pieces is not scanned whole for each piece.
    if (!text.includes("\n") && before !== "" && !before.endsWith("\n")) return [];
    const { stable, rest } = splitStable(this.#pending);
    if (stable === "") return [];
    this.#pending = rest;
    return this.#commitText(stable, width);
  }

  #flushText(width: number): string[] {
    const text = this.#pending;
    this.#pending = "";
    return this.#commitText(text, width);
  }

  #commitText(markdown: string, width: number): string[] {
    if (markdown.trim() === "") return [];
    const theme = this.#theme;
    const render = (w: number) => renderMarkdown(markdown, w, theme);
    const first = render(width);
    if (first.length === 0) return [];
    // Parts of one message are blocks of one document: one blank line between them.
    const joined = this.#roundCommitted && this.#lastGroup === "text";
    this.#roundCommitted = true;
    return this.#block("text", width, (w) => {
      const lines = w === width ? first : render(w);
      return joined ? ["", ...lines] : lines;
    });
  }

  #liveTextLines(width: number): string[] {
    const cached = this.#liveText;
    const epoch = widthEpoch();
    if (cached?.text === this.#pending && cached.width === width && cached.epoch === epoch) {
      return cached.lines;
    }
    const lines = liveMarkdown(this.#pending, width, this.#theme, LIVE_TEXT_LINES);
    this.#liveText = { text: this.#pending, width, epoch, lines };
    return lines;
  }

  #thinkingTail(width: number): string[] {
    // Only the end is shown, so only the end is wrapped: thinking can run to many pages.
    const tail = cleanText(this.#thinking.slice(-LIVE_THINKING_LINES * 4 * Math.max(width, 20)));
    const rows = tail.split("\n").filter((line) => line.trim() !== "").slice(-LIVE_THINKING_LINES)
      .flatMap((line) => wrapText(line, Math.max(1, width - 2)));
    return rows.slice(-LIVE_THINKING_LINES).map((row) => this.#theme.dim(`  ${row}`));
  }

  #endThinking(width: number): string[] {
    if (this.#thinkingSince === undefined) return [];
    const took = formatDuration(this.#now() - this.#thinkingSince);
    this.#discardThinking();
    const line = this.#theme.dim(`✻ thought for ${took}`);
    return this.#block("activity", width, (w) => [truncateToWidth(line, w)]);
  }

  #discardThinking(): void {
    this.#thinking = "";
    this.#thinkingSince = undefined;
  }

  #decide(event: Decision & { callId: string }, width: number): string[] {
    const tool = this.#tools.get(event.callId);
    const decision = { allow: event.allow, by: event.by, reason: event.reason };
    if (tool) {
      // Shown live under the running call, committed under its line at `tool_end`.
      tool.waiting = false;
      tool.decision = decision;
      if (tool.waitingSince !== undefined) {
        const waited = this.#now() - tool.waitingSince;
        tool.waited = (tool.waited ?? 0) + waited;
        this.#turnWaited += waited;
        tool.waitingSince = undefined;
      }
      return [];
    }
    const line = decisionText(decision, this.#theme);
    return this.#block("activity", width, (w) => [truncateToWidth(line, w)]);
  }

  #endTurn(event: Extract<AgentEvent, { type: "turn_end" }>, width: number): string[] {
    const t = this.#theme;
    const out = [...this.#endThinking(width), ...this.#flushText(width)];
    for (const tool of this.#tools.values()) {
      const end = {
        observation: { status: "ERROR", code: "CANCELLED", message: "" },
        durationMs: this.#now() - tool.startedAt,
      } as const;
      const workspace = this.#workspace;
      out.push(
        ...this.#block(
          "activity",
          width,
          (w) => finishedToolLines(tool, end, { width: w, theme: t, workspace }),
        ),
      );
    }
    this.#tools.clear();
    this.#roundText = false;
    if (event.exitReason === "CANCELLED") {
      // The person stopped it: one calm line, not an error.
      const n = this.#stoppedLines;
      const kept = n === 0 ? "" : ` · ${n} line${n === 1 ? "" : "s"} of output kept`;
      const line = t.dim(`■ stopped${kept}`);
      out.push(...this.#block("activity", width, (w) => [truncateToWidth(line, w)]));
    } else if (event.exitReason !== "COMPLETED") {
      const detail = event.error === undefined ? "" : `: ${event.error}`;
      const line = t.red(`✗ ${event.exitReason}${detail}`);
      out.push(...this.#block("activity", width, (w) => this.#wrap(line, w)));
    }
    out.push(...this.#hostFiles(hostFileLines(event.hostFiles ?? []), width));
    const elapsed = this.#turnStartedAt === undefined
      ? undefined
      : this.#now() - this.#turnStartedAt - this.#turnWaited;
    this.#turnStartedAt = undefined;
    const footer = footerText(event, elapsed, t);
    return [...out, ...this.#block("footer", width, (w) => [truncateToWidth(footer, w)])];
  }

  /** The changes to files that run code on the host (`hostFileLines`), in yellow; none for none. */
  #hostFiles(lines: string[], width: number): string[] {
    if (lines.length === 0) return [];
    const t = this.#theme;
    return this.#block(
      "activity",
      width,
      (w) => lines.map((line) => t.yellow(truncateToWidth(line, w))),
    );
  }

  /**
   * One committed block: `render` at `width`, after a blank line when the kind of block changes.
   * `render` (pure: it captures the block's source, never the view's state) is kept for
   * `blocks()`, which draws the same blocks again at another width after a resize.
   */
  #block(group: Group, width: number, render: (width: number) => string[]): string[] {
    const lines = render(width);
    if (lines.length === 0) return [];
    const gap = this.#lastGroup !== undefined && this.#lastGroup !== group;
    this.#lastGroup = group;
    this.#made.push({ gap, render: (w) => w === width ? lines : render(w) });
    return gap ? ["", ...lines] : lines;
  }

  /**
   * One of tern's lines that quotes other words (a server's error message) wrapped to `width`,
   * the rows after the first indented two cells: a row of the quoted words never starts at the
   * first column, where it could read as a line of tern's (`› …`, `✓ …`).
   */
  #wrap(text: string, width: number): string[] {
    return wrapTrimmed(text, Math.max(1, width - 2)).map((line, i) =>
      truncateToWidth(i === 0 ? line : `  ${line}`, width)
    );
  }

  /** `text` wrapped after a two-cell mark, continuation lines indented to match. */
  /**
   * The person's message under `mark`, bold; past {@linkcode MESSAGE_LINES_SHOWN} lines or
   * {@linkcode MESSAGE_CHARS_SHOWN} characters, its head and a dim count of the rest.
   */
  #message(mark: string, text: string, width: number): string[] {
    const { shown, rest } = messageHead(text);
    const rows = this.#prefixed(mark, shown, width, this.#theme.bold);
    if (rest === undefined) return rows;
    return [...rows, truncateToWidth(`  ${this.#theme.dim(rest)}`, width)];
  }

  #prefixed(mark: string, text: string, width: number, paint: (s: string) => string): string[] {
    const rows = cleanText(text).split("\n")
      .flatMap((line) => wrapText(line, width - 2).map((row) => row.trimEnd()));
    return rows.map((row, i) => truncateToWidth(`${i === 0 ? mark : "  "}${paint(row)}`, width));
  }
}

/** `text`'s head as the transcript draws it, and a count of what is left out (if anything). */
function messageHead(text: string): { shown: string; rest?: string } {
  let end = text.length;
  let breaks = 0;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) {
    if (++breaks === MESSAGE_LINES_SHOWN) {
      end = at;
      break;
    }
  }
  end = Math.min(end, MESSAGE_CHARS_SHOWN);
  end = cutBack(text, end);
  if (end >= text.length) return { shown: text };
  const left = text.slice(end).replace(/^\n/, "");
  const lines = lineCount(left);
  const count = (n: number, what: string) =>
    `${n.toLocaleString("en-US")} ${what}${n === 1 ? "" : "s"}`;
  return {
    shown: text.slice(0, end),
    rest: `… ${count(codePointCount(left), "more character")} (${count(lines, "line")}) not shown`,
  };
}

function lineCount(text: string): number {
  const trimmed = text.replace(/\n+$/, "");
  return trimmed === "" ? 0 : trimmed.split("\n").length;
}
