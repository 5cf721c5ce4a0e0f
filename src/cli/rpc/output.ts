/**
 * `tern rpc`'s stdout: lines written in order without holding tern's thread. A synchronous
 * write to a client that stopped reading blocked everything (timers, a tool's time limit, an
 * `abort` line, Ctrl-C) until it read again. Lines wait here instead; a command's progress
 * (`tool_update`), which the call's result repeats, is left out while more than
 * {@linkcode MAX_WAITING_BYTES} wait, so a stalled client cannot grow tern's memory with it.
 * Answers are never left out: while more than {@linkcode MAX_HELD_BYTES} wait, tern reads no
 * further command ({@linkcode LineOutput.room}), so a client that sends but does not read cannot
 * either.
 */

/** The most bytes that may wait before progress lines are left out. */
export const MAX_WAITING_BYTES = 4 * 1024 * 1024;

/** The most bytes that may wait before tern stops reading commands until the client reads. */
export const MAX_HELD_BYTES = 16 * 1024 * 1024;

/** Where the lines go: stdout, or a test's writer. */
export interface LineTarget {
  write(bytes: Uint8Array): Promise<number>;
}

export class LineOutput {
  readonly #target: LineTarget;
  readonly #encoder = new TextEncoder();
  #waiting: Uint8Array[] = [];
  #waitingBytes = 0;
  #writing: Promise<void> | undefined;
  #gone = false;
  /** Resolved by the pump once no more than `MAX_HELD_BYTES` wait. */
  #roomy: Array<() => void> = [];
  /** Progress lines left out so far. */
  dropped = 0;

  constructor(target: LineTarget) {
    this.#target = target;
  }

  /** Queues `line` (ending with a line break); a `droppable` one is left out while many wait. */
  write(line: string, droppable = false): void {
    if (this.#gone) return;
    const bytes = this.#encoder.encode(line);
    if (droppable && this.#waitingBytes + bytes.length > MAX_WAITING_BYTES) {
      this.dropped++;
      return;
    }
    this.#waiting.push(bytes);
    this.#waitingBytes += bytes.length;
    this.#writing ??= this.#pump();
  }

  /** Resolves once every queued line is written (or the reader went away). */
  async drained(): Promise<void> {
    while (this.#writing !== undefined) await this.#writing;
  }

  /**
   * Resolves once no more than {@linkcode MAX_HELD_BYTES} wait (or the reader went away): at
   * once, mostly. Never rejects.
   */
  room(): Promise<void> {
    if (this.#waitingBytes <= MAX_HELD_BYTES) return Promise.resolve();
    return new Promise((resolve) => this.#roomy.push(resolve));
  }

  #wakeRoomy(): void {
    if (this.#waitingBytes > MAX_HELD_BYTES) return;
    for (const resolve of this.#roomy.splice(0)) resolve();
  }

  async #pump(): Promise<void> {
    try {
      while (this.#waiting.length > 0) {
        const bytes = this.#waiting[0];
        let offset = 0;
        while (offset < bytes.length) offset += await this.#target.write(bytes.subarray(offset));
        this.#waiting.shift();
        this.#waitingBytes -= bytes.length;
        this.#wakeRoomy();
      }
    } catch (error) {
      // A reader that went away is not an error of ours: nothing more is written.
      if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
      this.#gone = true;
      this.#waiting = [];
      this.#waitingBytes = 0;
    } finally {
      this.#writing = undefined;
      this.#wakeRoomy();
    }
  }
}
