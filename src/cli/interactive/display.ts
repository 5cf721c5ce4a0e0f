/**
 * Where the interactive session draws and reads: the terminal (raw keys, the inline screen,
 * resize) or, when stdin or stdout is not a terminal, plain line mode (one message per input
 * line, finished transcript lines written as plain text, no live region).
 */
import { screenLine } from "../../core/terminal_text.ts";
import type { KeyEvent } from "../../tui/key_event.ts";
import { KeyDecoder } from "../../tui/keys.ts";
import { Screen } from "../../tui/screen.ts";
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

export async function openDisplay(options: DisplayOptions): Promise<Display> {
  return options.interactive ? await terminalDisplay(options) : lineDisplay(options);
}

async function terminalDisplay(options: DisplayOptions): Promise<Display> {
  const decoder = new KeyDecoder();
  let escapeTimer: ReturnType<typeof setTimeout> | undefined;
  // The screen needs the open terminal, and the terminal's callbacks need the screen.
  const drawn: { screen?: Screen; sync?: () => void } = {};
  const deliver = (events: KeyEvent[]) => {
    for (const event of events) {
      if (event.kind === "report") terminal.handleReport(event.sequence);
      else options.onKey(event);
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
    },
    onCapabilities: (capabilities) =>
      drawn.screen?.setSynchronized(capabilities.synchronizedOutput),
  });
  let size = terminal.size();
  const live = new Screen(terminal, size);
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
    commit: (lines, next) => {
      sync();
      live.commit(
        lines.map(screenLine),
        next && { lines: safeFrame(next.lines), cursor: next.cursor },
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
      live.finish();
      terminal.close();
    },
  };
}

function lineDisplay(options: DisplayOptions): Display {
  const encoder = new TextEncoder();
  const write = (text: string) => {
    const bytes = encoder.encode(text);
    let offset = 0;
    try {
      while (offset < bytes.length) offset += Deno.stdout.writeSync(bytes.subarray(offset));
    } catch (error) {
      if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
    }
  };
  return {
    commit: (lines) => write(lines.map((line) => screenLine(line) + "\n").join("")),
    render: () => {},
    columns: () => 100,
    lines: (submit, idle) => {
      readLines(async (line) => {
        submit(line);
        await idle();
      }).then(options.onEnd, options.onEnd);
    },
    close: () => {},
  };
}

/** Calls `each` for every line of stdin, one at a time. */
async function readLines(each: (line: string) => Promise<void>): Promise<void> {
  let pending = "";
  for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, newline).replace(/\r$/, "");
      pending = pending.slice(newline + 1);
      await each(line);
    }
  }
  if (pending !== "") await each(pending);
}
