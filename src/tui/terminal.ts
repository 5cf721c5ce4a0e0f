/**
 * The process terminal for the interactive UI: raw input, synchronous complete writes, size and
 * resize, bracketed paste, and the capability probe (kitty keyboard protocol, synchronized
 * output). Everything it changes is undone by `close()`, which also runs on `unload`.
 *
 * Input is read through `Deno.stdin.readable`: cancelling its reader at `close()` lets the
 * process exit on its own (a pending `Deno.stdin.read()` would keep it alive, and closing stdin
 * is not an option). The cancelled stream cannot be read again, so a process opens the terminal
 * once; the first chunk typed after `close()` is swallowed by the cancelled read.
 */

/** What the renderer needs from a terminal. */
export interface TerminalIO {
  /** Writes `text` completely before returning. */
  write(text: string): void;
  /** Size in cells. */
  size(): { columns: number; rows: number };
}

/** What the terminal has reported it supports. */
export interface TerminalCapabilities {
  /** Kitty keyboard protocol (disambiguated keys, so Shift+Enter is reported). */
  kittyKeyboard: boolean;
  /** Synchronized output, mode 2026. */
  synchronizedOutput: boolean;
}

/** The open process terminal. */
export interface Terminal extends TerminalIO, Readonly<TerminalCapabilities> {
  /**
   * Starts reading input (once; later calls do nothing). Separate from opening because Deno
   * builds its stream machinery on the first stream (a cost worth hiding): a caller draws its first
   * frame before. Keys typed meanwhile wait in the terminal's input buffer.
   */
  listen(): void;
  /** Feeds a terminal reply (a `report` key event's sequence) to the capability probe. */
  handleReport(sequence: string): void;
  /** Restores the terminal as it was; idempotent, never throws. */
  close(): void;
}

/** Callbacks for `openTerminal`. */
export interface OpenTerminalOptions {
  /** Raw input bytes, in order, as they arrive. */
  onInput: (bytes: Uint8Array) => void;
  /** The terminal was resized (SIGWINCH); read `size()` again. */
  onResize: () => void;
  /** Called once, when the probe's last reply (device attributes) arrives. */
  onCapabilities?: (capabilities: TerminalCapabilities) => void;
}

/** A terminal reply that the capability probe understands. */
export type CapabilityReport =
  | { kind: "kitty-flags"; flags: number }
  | { kind: "mode"; mode: number; setting: number }
  | { kind: "device-attributes" };

/** Progress of the capability probe. */
export interface ProbeState extends TerminalCapabilities {
  /** The device-attributes reply arrived: every answer that will come has come. */
  complete: boolean;
}

const CSI = "\x1b[";

/**
 * The probe: kitty keyboard flags (CSI ?u), DECRQM for mode 2026, then primary device
 * attributes (CSI c), which every terminal answers, and answers last.
 */
export const CAPABILITY_QUERY = `${CSI}?u${CSI}?2026$p${CSI}c`;

/** The probe's state before any reply. */
export const INITIAL_PROBE: ProbeState = {
  kittyKeyboard: false,
  synchronizedOutput: false,
  complete: false,
};

/**
 * What terminal reply `sequence` is, with or without its leading `ESC [`; undefined for any
 * other sequence. Kitty flags `CSI ? n u`, DECRQM reply `CSI ? mode ; setting $ y`, primary
 * device attributes `CSI ? … c`.
 */
export function parseReport(sequence: string): CapabilityReport | undefined {
  const body = sequence.startsWith(CSI)
    ? sequence.slice(CSI.length)
    : sequence.startsWith("\x9b")
    ? sequence.slice(1)
    : sequence;
  const kitty = /^\?(\d*)u$/.exec(body);
  if (kitty) return { kind: "kitty-flags", flags: Number(kitty[1] || "0") };
  const mode = /^\?(\d+);(\d+)\$y$/.exec(body);
  if (mode) return { kind: "mode", mode: Number(mode[1]), setting: Number(mode[2]) };
  if (/^\?[\d;]*c$/.test(body)) return { kind: "device-attributes" };
  return undefined;
}

/**
 * The probe state after reply `sequence`. Kitty keyboard support is known when a flags reply
 * arrives before the device attributes; mode 2026 is supported when DECRQM reports it set (1)
 * or reset (2). Replies after completion change nothing.
 */
export function applyReport(state: ProbeState, sequence: string): ProbeState {
  if (state.complete) return state;
  const report = parseReport(sequence);
  if (!report) return state;
  if (report.kind === "kitty-flags") return { ...state, kittyKeyboard: true };
  if (report.kind === "device-attributes") return { ...state, complete: true };
  if (report.mode === 2026 && (report.setting === 1 || report.setting === 2)) {
    return { ...state, synchronizedOutput: true };
  }
  return state;
}

let opened = false;

/**
 * Opens the process terminal: raw mode, the SIGWINCH listener, bracketed paste and the
 * capability probe (kitty flags 1 are pushed once support is known); input, the probe's replies
 * included, is read from `listen()` on. Throws when stdin is not a terminal or the terminal
 * was already opened in this process.
 */
export function openTerminal(options: OpenTerminalOptions): Promise<Terminal> {
  try {
    return Promise.resolve(createTerminal(options));
  } catch (error) {
    return Promise.reject(error);
  }
}

function createTerminal(options: OpenTerminalOptions): Terminal {
  if (!Deno.stdin.isTerminal()) {
    throw new Error("Cannot open the terminal: stdin is not a terminal");
  }
  if (opened) throw new Error("Cannot open the terminal: it was already opened in this process");
  Deno.stdin.setRaw(true, { cbreak: false });
  opened = true;

  const encoder = new TextEncoder();
  let broken = false;
  const write = (text: string) => {
    if (broken || text === "") return;
    let bytes = encoder.encode(text);
    try {
      while (bytes.length > 0) bytes = bytes.subarray(Deno.stdout.writeSync(bytes));
    } catch {
      // The terminal went away (a closed window, a dropped ssh link: EPIPE or EIO). Drawing
      // stops; the session goes on to its orderly end (the hangup signal ends it).
      broken = true;
    }
  };

  let probe = INITIAL_PROBE;
  let kittyPushed = false;
  let closed = false;
  const onWinch = () => options.onResize();
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;

  const close = () => {
    if (closed) return;
    closed = true;
    removeEventListener("unload", close);
    Deno.removeSignalListener("SIGWINCH", onWinch);
    try {
      // Auto-wrap on again too: the screen turns it off while it draws (screen.ts).
      write((kittyPushed ? `${CSI}<u` : "") + `${CSI}?2004l${CSI}?7h${CSI}?25h`);
    } catch {
      // Restoring must not throw; the terminal may be gone.
    }
    try {
      Deno.stdin.setRaw(false);
    } catch {
      // Same.
    }
    reader?.cancel().catch(() => {});
  };

  const readLoop = async () => {
    if (closed || reader) return;
    reader = Deno.stdin.readable.getReader();
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch {
        return;
      }
      if (chunk.done || closed) return;
      options.onInput(chunk.value);
    }
  };

  addEventListener("unload", close);
  Deno.addSignalListener("SIGWINCH", onWinch);
  write(`${CSI}?2004h${CAPABILITY_QUERY}`);

  return {
    listen: () => void readLoop(),
    write,
    size: () => {
      try {
        return Deno.consoleSize();
      } catch {
        return { columns: 80, rows: 24 };
      }
    },
    get kittyKeyboard() {
      return probe.kittyKeyboard;
    },
    get synchronizedOutput() {
      return probe.synchronizedOutput;
    },
    handleReport(sequence: string) {
      if (closed || probe.complete) return;
      probe = applyReport(probe, sequence);
      if (!probe.complete) return;
      if (probe.kittyKeyboard) {
        write(`${CSI}>1u`);
        kittyPushed = true;
      }
      options.onCapabilities?.({
        kittyKeyboard: probe.kittyKeyboard,
        synchronizedOutput: probe.synchronizedOutput,
      });
    },
    close,
  };
}
