/**
 * Persistent prompt history: a JSONL file with one JSON string per line, appended one whole
 * line per write so several sessions can share it, and compacted when it grows past twice its
 * limit. Keys in what the person typed are masked before an entry is kept (see `History.open`).
 */
import { dirname } from "../core/path.ts";
import { lazyKeyMasker } from "../sandbox/secrets.ts";

/** No key of tern's own: the key formats only. */
const NO_KEYS = {};

/** What the editor needs from a history to walk it with up/down. */
export interface HistoryNavigator {
  /** The entry before the one shown; the first call remembers `current` as the draft. */
  previous(current: string): string | undefined;
  /** The entry after the one shown, the remembered draft past the newest, or undefined. */
  next(): string | undefined;
  /** Stops walking: the next `previous()` starts again from the newest entry. */
  reset(): void;
}

/** Prompt history kept in memory (newest last) and in a JSONL file. */
export class History implements HistoryNavigator {
  readonly #path: string;
  readonly #limit: number;
  readonly #mask: (text: string) => string;
  #entries: string[];
  /** Lines in the file, counting malformed ones: the measure for compaction. */
  #fileLines: number;
  /** Position while walking (an index into entries, or entries.length for the draft). */
  #index: number | undefined;
  #draft = "";
  #writes: Promise<void> = Promise.resolve();

  private constructor(
    path: string,
    limit: number,
    mask: (text: string) => string,
    entries: string[],
    fileLines: number,
  ) {
    this.#path = path;
    this.#limit = limit;
    this.#mask = mask;
    this.#entries = entries;
    this.#fileLines = fileLines;
  }

  /**
   * Reads the history at `path`, keeping the newest `limit` entries. A missing file is an empty
   * history; malformed lines are skipped. Rejects only when the file exists but cannot be read.
   * Every entry added is first passed through `mask` (default: the key formats the secret masker
   * knows, `sk-…`, `ghp_…`, `password=…`, replaced by `[REDACTED:…]`): the file is plain text
   * that outlives the session, and a key pasted into a prompt must not be kept there in the
   * clear (the session masks the keys tern holds; pass `Conversation.maskKnownKeys` for those).
   */
  static async open(
    path: string,
    limit = 1000,
    options: { mask?: (text: string) => string } = {},
  ): Promise<History> {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`Cannot open history with limit "${limit}": must be a positive integer`);
    }
    let text = "";
    try {
      text = await Deno.readTextFile(path);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    const lines = text.split("\n").filter((line) => line.trim() !== "");
    const entries = lines.map(parseLine).filter((entry) => entry !== undefined);
    // Made at the first entry, not before the prompt is drawn.
    const mask = options.mask ?? lazyKeyMasker(() => NO_KEYS);
    return new History(path, limit, mask, entries.slice(-limit), lines.length);
  }

  /** The entries, oldest first. */
  get entries(): readonly string[] {
    return this.#entries;
  }

  /**
   * Records `text` masked (not blank, not a repeat of the newest entry) and ends any walk. The
   * entry is in memory at once; the returned promise settles when it is on disk and rejects when
   * the file cannot be written.
   */
  add(typed: string): Promise<void> {
    this.reset();
    const text = this.#mask(typed);
    if (text.trim() === "" || this.#entries.at(-1) === text) return this.#writes;
    this.#entries.push(text);
    if (this.#entries.length > this.#limit) {
      this.#entries.splice(0, this.#entries.length - this.#limit);
    }
    const write = this.#writes.catch(() => {}).then(() => this.#append(text));
    this.#writes = write;
    return write;
  }

  previous(current: string): string | undefined {
    if (this.#index === undefined) {
      this.#draft = current;
      this.#index = this.#entries.length;
    }
    if (this.#index === 0) return undefined;
    this.#index--;
    return this.#entries[this.#index];
  }

  next(): string | undefined {
    if (this.#index === undefined) return undefined;
    this.#index++;
    if (this.#index < this.#entries.length) return this.#entries[this.#index];
    this.#index = undefined;
    return this.#draft;
  }

  reset(): void {
    this.#index = undefined;
    this.#draft = "";
  }

  async #append(text: string): Promise<void> {
    await Deno.mkdir(dirname(this.#path), { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(this.#path, JSON.stringify(text) + "\n", {
      append: true,
      create: true,
      mode: 0o600,
    });
    this.#fileLines++;
    if (this.#fileLines > 2 * this.#limit) await this.#compact();
  }

  /** Rewrites the file with only the kept entries, through a temporary file and a rename. */
  async #compact(): Promise<void> {
    const body = this.#entries.map((entry) => JSON.stringify(entry) + "\n").join("");
    const temporary = `${this.#path}.${crypto.randomUUID()}.tmp`;
    await Deno.writeTextFile(temporary, body, { mode: 0o600 });
    try {
      await Deno.rename(temporary, this.#path);
    } catch (error) {
      await Deno.remove(temporary).catch(() => {});
      throw error;
    }
    this.#fileLines = this.#entries.length;
  }
}

function parseLine(line: string): string | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}
