/**
 * Where the interactive session draws and reads: the terminal (raw keys, the inline screen,
 * resize) or, when stdin or stdout is not a terminal, plain line mode (one message per input
 * line, finished transcript lines written as plain text, no live region).
 */
import { OutputError } from "../errors.ts";
import { screenLine } from "../../core/terminal_text.ts";
import type { KeyEvent } from "../../tui/key_event.ts";
import { KeyDecoder } from "../../tui/keys.ts";
import { Screen } from "../../tui/screen.ts";
import { breakText, visibleWidth } from "../../tui/width.ts";
import { openTerminal, type Terminal } from "../../tui/terminal.ts";
import type { AppScreen } from "./app.ts";

export interface Display extends AppScreen {
  /**
   * Line mode only: feeds each input line to `submit`, waiting for `idle()` after each, and
   * calls the display's `onEnd` at the end of input.
   */
  lines(submit: (line: string) => void, idle: () => Promise<void>): void;
  /** Restores the terminal (or flushes line mode). Idempotent. */
  close(): void;
  /**
   * Line mode only: whether writing the output failed (a full disk; a reader that went away is
   * not a failure). The failure was said on stderr once; the session then exits 1.
   */
  failed?(): boolean;
  /**
   * Line mode only: whether the input ended without a line that was not blank (a new session
   * then says so and exits 2, as for a command line without a task).
   */
  noInput?(): boolean;
}

export interface DisplayOptions {
  interactive: boolean;
  onKey: (event: KeyEvent) => void;
  onResize: () => void;
  /** The input ended (line mode) or the terminal went away. */
  onEnd: () => void;
}

/** A lone Esc is told from the start of a sequence by this much quiet, in milliseconds. */
const ESCAPE_WAIT_MS = 30;
/**
 * A resize redraws the visible committed blocks once the size has been still this long, in
 * milliseconds (dragging a window's edge sends a stream of SIGWINCH).
 */
const RESIZE_SETTLE_MS = 150;
/** Position requests answered too late (the live region moved meanwhile) before giving up. */
const POSITION_TRIES = 5;
/** A cursor position report, `CSI row ; col R`. */
// deno-lint-ignore no-control-regex
const POSITION_REPORT = /^\x1b\[(\d+);\d+R$/;

export async function openDisplay(options: DisplayOptions): Promise<Display> {
  return options.interactive ? await terminalDisplay(options) : lineDisplay(options);
}

async function terminalDisplay(options: DisplayOptions): Promise<Display> {
  const decoder = new KeyDecoder();
  let escapeTimer: ReturnType<typeof setTimeout> | undefined;
  // The screen needs the open terminal, and the terminal's callbacks need the screen.
  const drawn: { screen?: Screen; sync?: () => void } = {};
  // After a resize settles, the committed blocks still on screen are drawn again at the new
  // width: the screen asks where the cursor is, and redraws once the terminal answers.
  let settleTimer: ReturnType<typeof setTimeout> | undefined;
  let tries = 0;
  const askPosition = () => {
    tries++;
    drawn.screen?.askPosition();
  };
  const onPosition = (row: number) => {
    const used = drawn.screen?.position(row) ?? true;
    if (!used && tries < POSITION_TRIES) askPosition();
  };
  const deliver = (events: KeyEvent[]) => {
    for (const event of events) {
      if (event.kind !== "report") options.onKey(event);
      else {
        const position = POSITION_REPORT.exec(event.sequence);
        if (position) onPosition(Number(position[1]));
        else terminal.handleReport(event.sequence);
      }
    }
  };
  const terminal: Terminal = await openTerminal({
    onInput: (bytes) => {
      clearTimeout(escapeTimer);
      deliver(decoder.feed(bytes));
      escapeTimer = setTimeout(() => deliver(decoder.flush()), ESCAPE_WAIT_MS);
    },
    onResize: () => {
      drawn.sync?.();
      options.onResize();
      clearTimeout(settleTimer);
      settleTimer = setTimeout(() => {
        tries = 0;
        askPosition();
      }, RESIZE_SETTLE_MS);
    },
    onCapabilities: (capabilities) =>
      drawn.screen?.setSynchronized(capabilities.synchronizedOutput),
  });
  let size = terminal.size();
  const live = new Screen(terminal, size, { reflow: reflows() });
  // SIGWINCH arrives asynchronously: a frame drawn between the terminal's resize and the signal
  // would move by the old width. So every write first checks the size (one ioctl).
  const sync = () => {
    const now = terminal.size();
    if (now.columns === size.columns && now.rows === size.rows) return;
    size = now;
    live.resize(now);
  };
  drawn.screen = live;
  drawn.sync = sync;
  // Most rows repeat from frame to frame (a frame every 100 ms while a turn runs): each is
  // checked once.
  let checked = new Map<string, string>();
  const safeFrame = (lines: string[]) => {
    const next = new Map<string, string>();
    const safe = lines.map((line) => {
      const clean = checked.get(line) ?? screenLine(line);
      next.set(line, clean);
      return clean;
    });
    checked = next;
    return safe;
  };
  let closed = false;
  return {
    // The last net at the terminal's edge: whatever a line carries, only tern's styling passes.
    commit: (lines, next, blocks) => {
      sync();
      live.commit(
        fitted(lines.map(screenLine), size.columns),
        next && { lines: safeFrame(next.lines), cursor: next.cursor },
        blocks?.map((draw) => (columns: number) => fitted(draw(columns).map(screenLine), columns)),
      );
      terminal.listen();
    },
    render: (lines, cursor) => {
      sync();
      live.render(safeFrame(lines), cursor);
      // Input is read from the first frame on (see Terminal.listen): the prompt shows first.
      terminal.listen();
    },
    columns: () => terminal.size().columns,
    rows: () => terminal.size().rows,
    clear: () => {
      sync();
      live.clear();
    },
    lines: () => {},
    close: () => {
      if (closed) return;
      closed = true;
      clearTimeout(escapeTimer);
      clearTimeout(settleTimer);
      live.finish();
      terminal.close();
    },
  };
}

/**
 * Whether the terminal re-wraps its lines when its width changes. xterm (which sets
 * XTERM_VERSION) and the Linux console do not; tmux and screen inside them do.
 */
function reflows(): boolean {
  try {
    if (Deno.env.get("TMUX") !== undefined || Deno.env.get("STY") !== undefined) return true;
    return Deno.env.get("XTERM_VERSION") === undefined && Deno.env.get("TERM") !== "linux";
  } catch {
    return true;
  }
}

/**
 * Committed `rows` no wider than the terminal's `columns`: the view never draws narrower than
 * 20 columns, so on a narrower terminal a row is broken here, its later pieces indented two
 * cells. Left to the terminal's own wrap, a piece of the model's words would start a row at
 * column 0, where it reads as tern's own (`✓ bash …`, `› …`).
 */
function fitted(rows: string[], columns: number): string[] {
  return rows.flatMap((row) => {
    if (visibleWidth(row) <= columns) return [row];
    const indent = columns >= 4 ? "  " : "";
    return breakText(row, Math.max(1, columns - indent.length)).map((piece, i) =>
      i === 0 ? piece : indent + piece
    );
  });
}

function lineDisplay(options: DisplayOptions): Display {
  const encoder = new TextEncoder();
  let failed = false;
  let noInput = false;
  const write = (text: string) => {
    if (failed) return;
    const bytes = encoder.encode(text);
    let offset = 0;
    try {
      while (offset < bytes.length) offset += Deno.stdout.writeSync(bytes.subarray(offset));
    } catch (error) {
      if (error instanceof Deno.errors.BrokenPipe) return;
      failed = true;
      console.error(`tern: ${new OutputError(error).message}`);
    }
  };
  return {
    failed: () => failed,
    noInput: () => noInput,
    commit: (lines) => write(lines.map((line) => screenLine(line) + "\n").join("")),
    render: () => {},
    columns: () => 100,
    lines: (submit, idle) => {
      const tooLong = () =>
        console.error(
          `tern: Skipped an input line of more than ${MAX_LINE_CHARS} characters, the most ` +
            "one message may have: put long text in a file and name the file in the message",
        );
      let given = false;
      const ended = () => {
        noInput = !given;
        options.onEnd();
      };
      readLines(Deno.stdin.readable, async (line) => {
        if (line.trim() !== "") given = true;
        submit(line);
        await idle();
      }, { maxChars: MAX_LINE_CHARS, tooLong }).then(ended, ended);
    },
    close: () => {},
  };
}

/**
 * The most characters one input line, one message, may have in line mode: the cap of an RPC
 * line (`RPC_MAX_LINE`), far beyond what a model's window takes.
 */
export const MAX_LINE_CHARS = 4 * 1024 * 1024;

/**
 * Calls `each` for every line of `input`, one at a time. A line longer than `maxChars` is
 * dropped as it arrives, never held whole, and `tooLong` is called in its place. Each chunk is
 * searched once, so a long line costs time in proportion to its length.
 */
export async function readLines(
  input: ReadableStream<Uint8Array>,
  each: (line: string) => Promise<void>,
  options: { maxChars: number; tooLong: () => void },
): Promise<void> {
  let pending = "";
  let dropping = false;
  const end = async (line: string) => {
    if (dropping || line.length > options.maxChars) options.tooLong();
    else await each(line.replace(/\r$/, ""));
    dropping = false;
  };
  for await (const chunk of input.pipeThrough(new TextDecoderStream())) {
    let start = 0;
    for (let newline = chunk.indexOf("\n"); newline >= 0; newline = chunk.indexOf("\n", start)) {
      const line = pending + chunk.slice(start, newline);
      pending = "";
      start = newline + 1;
      await end(line);
    }
    pending += chunk.slice(start);
    if (pending.length > options.maxChars) {
      dropping = true;
      pending = "";
    }
  }
  if (pending !== "" || dropping) await end(pending);
}
