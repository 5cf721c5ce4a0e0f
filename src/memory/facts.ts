/**
 * Explicit long-term facts: what the person asked tern to remember (`/save`). Two append-only
 * JSONL files under the tern home, one line per fact `{id, text, scope, created}`:
 * `<ternHome>/memory/user.jsonl` (every workspace) and
 * `<ternHome>/memory/projects/<encoded workspace>.jsonl` (one workspace). Forgetting appends a
 * `{"type":"forget","id":…,"at":…}` tombstone; nothing is rewritten. A project fact also records
 * its workspace, and is loaded for that workspace only: two workspaces whose file names collide
 * (the name ends in a 32-bit hash, cheap to collide on purpose) never see each other's facts. A load skips torn or
 * malformed lines and lines of unknown types, and the next append steps over a torn last line.
 * Given a {@linkcode KeyMasker}, a store keeps no key: a fact holding one is refused, and one
 * saved before is loaded masked, so it is neither shown nor sent.
 */
import { TernError } from "../core/errors.ts";
import { uniqueHexId } from "../core/ids.ts";
import { withoutInvisible } from "../core/invisible_text.ts";
import { dirname, join, resolve } from "../core/path.ts";
import { FactIdError, FactTextError } from "./errors.ts";

/** Where a fact applies: this workspace only, or every workspace of the person. */
export type FactScope = "project" | "user";

/** One remembered fact. */
export interface Fact {
  /** 8 lowercase hex digits, unique among the facts of both files. */
  id: string;
  /**
   * One line: whitespace and control characters collapsed to single spaces, nothing invisible
   * (bidi, zero-width, tag characters), at most {@linkcode MAX_FACT_CHARS} characters.
   */
  text: string;
  scope: FactScope;
  /** ISO time of `add`. */
  created: string;
}

/** What finds keys in a text: `mask` returns it with each replaced (a `SecretMasker` fits). */
export interface KeyMasker {
  mask(text: string): string;
}

/** The longest fact, in characters (code points), after whitespace is collapsed. */
export const MAX_FACT_CHARS = 2_000;

const ID = /^[0-9a-f]{8}$/;
/** Runs of whitespace and control characters: a fact is one line. */
const SPACING = /[\s\p{Cc}]+/gu;
const encoder = new TextEncoder();

/** `<ternHome>/memory/user.jsonl`: facts for every workspace. */
export function userFactsPath(ternHome: string): string {
  return join(ternHome, "memory", "user.jsonl");
}

/**
 * `<ternHome>/memory/projects/<encoded workspace>.jsonl`: facts for one workspace. The name is
 * made like a session folder's (see `encodeCwd` in src/session/paths.ts), so the same
 * workspace string gives the same name in both places; pass the real absolute path.
 */
export function projectFactsPath(ternHome: string, workspace: string): string {
  return join(ternHome, "memory", "projects", `${encodeWorkspace(resolve(workspace))}.jsonl`);
}

/** The facts of one person in one workspace, loaded once and appended to. */
export class MemoryStore {
  readonly #paths: Readonly<Record<FactScope, string>>;
  /** The resolved workspace, recorded with each project fact. */
  readonly #workspace: string;
  readonly #masker: KeyMasker | undefined;
  #facts: Record<FactScope, Fact[]> = { user: [], project: [] };
  /** Every id seen, forgotten ones included, so that a new fact never reuses one. */
  #ids = new Set<string>();

  private constructor(
    paths: Record<FactScope, string>,
    workspace: string,
    masker: KeyMasker | undefined,
  ) {
    this.#paths = paths;
    this.#workspace = workspace;
    this.#masker = masker;
  }

  /**
   * Loads both files of `workspace`; missing files mean no facts (nothing is created yet).
   * `masker`: the keys (and key formats) no fact may hold; facts are loaded with them masked.
   */
  static async open(
    ternHome: string,
    workspace: string,
    options: { masker?: KeyMasker } = {},
  ): Promise<MemoryStore> {
    const store = new MemoryStore(
      {
        user: userFactsPath(ternHome),
        project: projectFactsPath(ternHome, workspace),
      },
      resolve(workspace),
      options.masker,
    );
    await store.reload();
    return store;
  }

  /** Reads both files again, picking up what other tern processes wrote. */
  async reload(): Promise<void> {
    const ids = new Set<string>();
    const mask = (text: string) => this.#masker?.mask(text) ?? text;
    this.#facts = {
      user: await readFacts(this.#paths.user, "user", ids, mask),
      project: await readFacts(this.#paths.project, "project", ids, mask, this.#workspace),
    };
    this.#ids = ids;
  }

  /**
   * Remembers `text` as one fact: whitespace (newlines included) collapsed to single spaces.
   * A fact with the same text in the same scope is returned as it is, not saved twice.
   * Creates the file (0600) and its folders (0700) when needed.
   * @throws {FactTextError} when the text is empty, longer than 2,000 characters, or holds a
   * key the store's masker finds (the message never quotes it).
   */
  async add(text: string, scope: FactScope): Promise<Fact> {
    if (scope !== "project" && scope !== "user") {
      throw new RangeError(`Unknown fact scope "${scope}": use "project" or "user"`);
    }
    const line = normalizeFactText(text);
    if (this.#masker !== undefined && this.#masker.mask(line) !== line) {
      throw new FactTextError(
        "Cannot remember a fact that holds a key, token or password: it would be kept in " +
          "tern's home and sent to the model; save the fact without it",
        Array.from(line).length,
      );
    }
    const same = this.#facts[scope].find((fact) => fact.text === line);
    if (same) return { ...same };
    const fact: Fact = { id: this.#newId(), text: line, scope, created: new Date().toISOString() };
    const record = scope === "project" ? { ...fact, workspace: this.#workspace } : fact;
    await appendLine(this.#paths[scope], JSON.stringify(record));
    this.#ids.add(fact.id);
    this.#facts[scope].push(fact);
    return { ...fact };
  }

  /**
   * Forgets the one fact whose id starts with `idPrefix` (case-insensitive) by appending a
   * tombstone to its file. Reloads first, so facts saved by another process count.
   * @throws {FactIdError} when no fact or more than one fact matches.
   */
  async forget(idPrefix: string): Promise<Fact> {
    const prefix = idPrefix.trim().toLowerCase();
    if (prefix === "") {
      throw new FactIdError("Cannot forget a fact: give its id (see /memory)", idPrefix);
    }
    await this.reload();
    const matches = this.list().filter((fact) => fact.id.startsWith(prefix));
    if (matches.length === 0) {
      throw new FactIdError(`No remembered fact has an id starting "${idPrefix}"`, idPrefix);
    }
    if (matches.length > 1) {
      const ids = matches.map((fact) => `"${fact.id}"`).join(", ");
      throw new FactIdError(
        `Fact id "${idPrefix}" is ambiguous: it matches ${matches.length} facts: ${ids}`,
        idPrefix,
        matches.map((fact) => fact.id),
      );
    }
    const fact = matches[0];
    const tombstone = { type: "forget", id: fact.id, at: new Date().toISOString() };
    await appendLine(this.#paths[fact.scope], JSON.stringify(tombstone));
    this.#facts[fact.scope] = this.#facts[fact.scope].filter((kept) => kept.id !== fact.id);
    return fact;
  }

  /** The facts: user facts, then project facts, each oldest first. Copies. */
  list(): Fact[] {
    return [...this.#facts.user, ...this.#facts.project].map((fact) => ({ ...fact }));
  }

  #newId(): string {
    return uniqueHexId(this.#ids);
  }
}

/** `text` as one fact line. @throws {FactTextError} when empty or too long. */
function normalizeFactText(text: string): string {
  const line = oneLine(text);
  if (line === "") {
    throw new FactTextError("Cannot remember an empty fact: give the text to save", 0);
  }
  const length = Array.from(line).length;
  if (length > MAX_FACT_CHARS) {
    throw new FactTextError(
      `Cannot remember a fact of ${length.toLocaleString("en-US")} characters: ` +
        `the limit is ${MAX_FACT_CHARS.toLocaleString("en-US")}`,
      length,
    );
  }
  return line;
}

/**
 * `text` on one line a person reads as the model does: what draws as nothing removed, every run
 * of white space or control characters (any line break) one space.
 */
function oneLine(text: string): string {
  return withoutInvisible(text).replace(SPACING, " ").trim();
}

/**
 * A fact's text as read from its file, made what `add` would have saved: the file may have been
 * edited by hand or by anything that can write tern's home, and a line break in it would put
 * lines of its own in the prompt. Keys are masked before a too long text is cut (a cut key
 * would no longer be found); undefined when nothing is left.
 */
function storedFactText(text: string, mask: (text: string) => string): string | undefined {
  const chars = Array.from(mask(oneLine(text.slice(0, MAX_FACT_CHARS * 16))));
  if (chars.length === 0) return undefined;
  if (chars.length <= MAX_FACT_CHARS) return chars.join("");
  return `${chars.slice(0, MAX_FACT_CHARS - 1).join("")}…`;
}

/**
 * The live facts of one file, their text passed through `mask`; adds every id it sees
 * (forgotten ones too) to `ids`. Given `workspace`, a fact recorded for another one is left
 * out (one saved before facts recorded theirs is kept).
 */
async function readFacts(
  path: string,
  scope: FactScope,
  ids: Set<string>,
  mask: (text: string) => string,
  workspace?: string,
): Promise<Fact[]> {
  let text: string;
  try {
    // A FIFO would hold the read (and tern) forever, a folder would fail without naming it.
    if (!(await Deno.stat(path)).isFile) throw new TypeError("it is not a regular file");
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    const why = error instanceof Error ? error.message : String(error);
    throw new TernError(`Cannot read remembered facts "${path}": ${why}`, { cause: error });
  }
  const facts = new Map<string, Fact>();
  for (const line of text.split("\n")) {
    const value = parseLine(line);
    if (value === undefined || typeof value.id !== "string" || !ID.test(value.id)) continue;
    if (value.type === "forget") {
      facts.delete(value.id);
      ids.add(value.id);
    } else if (value.type === undefined && isFact(value, scope) && !ids.has(value.id)) {
      const text = storedFactText(value.text, mask);
      ids.add(value.id);
      if (text === undefined) continue;
      if (workspace !== undefined && (value.workspace ?? workspace) !== workspace) continue;
      facts.set(value.id, { id: value.id, text, scope, created: value.created });
    }
  }
  return [...facts.values()];
}

function isFact(
  value: Record<string, unknown>,
  scope: FactScope,
): value is Record<string, unknown> & { text: string; created: string } {
  return typeof value.text === "string" && value.text !== "" &&
    typeof value.created === "string" && value.scope === scope;
}

function parseLine(line: string): Record<string, unknown> | undefined {
  if (line.trim() === "") return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? value as Record<string, unknown>
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Appends `json` as one line, written whole under an exclusive lock so that two tern processes
 * never interleave, starting with "\n" when the file ends in a torn line.
 */
async function appendLine(path: string, json: string): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
  using file = await Deno.open(path, { read: true, append: true, create: true, mode: 0o600 });
  await file.lock(true);
  const size = (await file.stat()).size;
  let torn = false;
  if (size > 0) {
    const last = new Uint8Array(1);
    await file.seek(size - 1, Deno.SeekMode.Start);
    torn = (await file.read(last)) === 1 && last[0] !== 0x0a;
  }
  const bytes = encoder.encode(torn ? `\n${json}\n` : `${json}\n`);
  let written = 0;
  while (written < bytes.length) written += await file.write(bytes.subarray(written));
}

/**
 * The rule of `encodeCwd` in src/session/paths.ts (memory sits below session, so it is copied,
 * and a test keeps the two equal): the path without its leading "/", characters outside
 * `[A-Za-z0-9._-]` made "-", cut to 80, then "-" and the 32-bit FNV-1a hash in 8 hex digits.
 */
function encodeWorkspace(workspace: string): string {
  const readable = workspace.replace(/^\//, "").replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 80);
  let hash = 0x811c9dc5;
  for (const byte of encoder.encode(workspace)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `${readable}-${hash.toString(16).padStart(8, "0")}`;
}
