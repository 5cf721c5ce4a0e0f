/**
 * Cuts a file into chunks for the code index (issue 22): a FILE chunk plus its classes,
 * interfaces, functions and methods for the languages tree-sitter parses here, line windows for
 * other text; and the relations between them (contains, imports, extends, implements, calls).
 */
import { createHash } from "node:crypto";
import { chunkId, pathBase } from "./types.ts";
import type { Chunk, ChunkedFile, ChunkKind, ImportTarget, Relation } from "./types.ts";
import type { Binding } from "./_language_spec.ts";
import { grammarCarried, type Language, type Node, parserFor, type Tree } from "./_grammars.ts";
import { type Heritage, languageOf, type LanguageSpec } from "./_languages.ts";

/** The most characters of a chunk's text kept. */
export const CHUNK_TEXT_MAX = 4_000;
/** Lines per WINDOW chunk, and how many each window shares with the next. */
export const WINDOW_LINES = 60;
export const WINDOW_OVERLAP = 10;
/**
 * The most chunks kept of one file; the rest of the file is not indexed, and `cutAtLine` says
 * from where. A 1 MiB file of one-letter lines would otherwise make 10,000 windows.
 */
export const INDEX_FILE_MAX_CHUNKS = 2_000;
/** A letter or digit: a window without one holds no word to find, and is not kept. */
const WORD_CHAR = /[\p{L}\p{N}]/u;
/** Source larger than this (in characters) is windowed rather than parsed. */
const PARSE_MAX = 2_000_000;
/**
 * A parse may take 1 s, plus 2 ms per 1,000 characters (3 s for 1 MB; tree-sitter parses real
 * source at 1 to 2 MB/s here). Source made to make the parser backtrack takes far longer: a
 * 24 KB Java file of `a<` took 9 to 13 s and 1.8 GB.
 */
const PARSE_BASE_MS = 1_000;
const PARSE_MS_PER_CHAR = 0.002;
const SIGNATURE_MAX = 300;
const NAME_MAX = 200;
/** A callee worth a CALLS relation: a name or a chain of names (`a.b`, `a?.b`, `a::b`, `a->b`). */
const CALLEE = /^[\p{L}\p{N}_$]+(?:(?:\??\.|::|->)[\p{L}\p{N}_$]+)*$/u;

/**
 * Chunks one file (`hash`: its sha256(), when the caller has it; `limitMs`: how long its parse
 * may take, parseDeadlineMs() unless given). `path` is workspace-relative
 * and `/`-separated; its extension picks the language (TypeScript, TSX, JavaScript, Python, Go,
 * Java, Rust, C#, Ruby, C/C++, PHP, Bash), other text is cut into WINDOW chunks of
 * {@link WINDOW_LINES} lines overlapping by {@link WINDOW_OVERLAP}.
 * Binary content (a NUL byte) gives `language: "binary"` and no chunks. Source that does not
 * parse still gives its FILE chunk and whatever declarations tree-sitter recovered; source whose
 * parse outruns parseDeadlineMs() is windowed, with `unparsed` saying so. Never throws on
 * content, only when the tree-sitter runtime cannot load or fails (it aborts past
 * WASM_MEMORY_MAX_BYTES, and stays unusable in this isolate after: run untrusted files through
 * harness/code_index_parser.ts, whose process can be replaced).
 *
 * Tree-sitter checks its deadline only between steps, and one step on crafted input can run
 * for seconds: the deadline bounds most runaway parses, not all.
 */
export async function chunkFile(
  path: string,
  text: string,
  hash = sha256(text),
  limitMs = parseDeadlineMs(text.length),
): Promise<ChunkedFile> {
  if (text.includes("\0")) return { path, language: "binary", hash, chunks: [], relations: [] };
  const spec = parsedAs(path, text);
  if (!spec) return windowedFile({ path, text, hash });
  const parser = await parserFor(spec.grammar);
  const deadline = performance.now() + limitMs;
  const tree = parser.parse(text, null, { progressCallback: () => performance.now() > deadline });
  if (!tree) {
    // Stopped: without a reset the next parse would go on with this one's state.
    parser.reset();
    return windowedFile({ path, text, hash }, `its parse took longer than ${seconds(limitMs)}`);
  }
  try {
    const walker = new Walker(path, text, spec);
    walker.walk(tree);
    return capped({
      path,
      language: spec.grammar,
      hash,
      chunks: walker.chunks,
      relations: walker.resolve(),
    });
  } finally {
    tree.delete();
  }
}

/**
 * Whether chunkFile() parses `text` at `path` with tree-sitter (a language it reads, a grammar
 * this build carries, not too large, not binary); otherwise it only cuts line windows.
 */
export function parses(path: string, text: string): boolean {
  return !text.includes("\0") && parsedAs(path, text) !== undefined;
}

/** The longest chunkFile() lets tree-sitter parse `length` characters, in milliseconds. */
export function parseDeadlineMs(length: number): number {
  return PARSE_BASE_MS + Math.ceil(length * PARSE_MS_PER_CHAR);
}

/**
 * A file's `text` cut into WINDOW chunks as chunkFile() cuts text it does not parse;
 * `unparsed`: why source it would parse was not (see ChunkedFile).
 */
export function windowedFile(
  { path, text, hash }: { path: string; text: string; hash: string },
  unparsed?: string,
): ChunkedFile {
  const chunked: ChunkedFile = capped({
    path,
    language: "text",
    hash,
    chunks: windows(path, text),
    relations: [],
  });
  return unparsed === undefined ? chunked : { ...chunked, unparsed };
}

/**
 * `chunked` with at most {@linkcode INDEX_FILE_MAX_CHUNKS} chunks (the first ones) and only
 * the relations from them; `cutAtLine` is the first line of the first chunk left out.
 */
function capped(chunked: ChunkedFile): ChunkedFile {
  if (chunked.chunks.length <= INDEX_FILE_MAX_CHUNKS) return chunked;
  const chunks = chunked.chunks.slice(0, INDEX_FILE_MAX_CHUNKS);
  const kept = new Set(chunks.map((chunk) => chunk.id));
  const relations = chunked.relations.filter((relation) =>
    kept.has(relation.from) && (relation.to === undefined || !relation.to.startsWith(
      `${chunked.path}#`,
    ) || kept.has(relation.to))
  );
  const cutAtLine = chunked.chunks[INDEX_FILE_MAX_CHUNKS].startLine;
  return { ...chunked, chunks, relations, cutAtLine };
}

/** `1.2 s`. */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function parsedAs(path: string, text: string): LanguageSpec | undefined {
  const spec = languageOf(path);
  // A grammar a packaged build does not carry: the file is chunked as text.
  if (!spec || text.length > PARSE_MAX || !grammarCarried(spec.grammar)) return undefined;
  return spec;
}

/** The sha-256 of `text` as UTF-8, hex: a file's content hash in the index. */
export function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

function cap(text: string): string {
  return text.length > CHUNK_TEXT_MAX ? text.slice(0, CHUNK_TEXT_MAX) : text;
}

function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

function windows(path: string, text: string): Chunk[] {
  if (text === "") return [];
  const lines = splitLines(text);
  const symbol = baseName(path);
  const chunks: Chunk[] = [];
  for (let start = 0; start < lines.length; start += WINDOW_LINES - WINDOW_OVERLAP) {
    const end = Math.min(start + WINDOW_LINES, lines.length);
    const body = lines.slice(start, end).join("\n");
    if (!WORD_CHAR.test(body)) {
      if (end === lines.length) break;
      continue;
    }
    chunks.push({
      id: chunkId(path, "WINDOW", symbol, start + 1),
      path,
      kind: "WINDOW",
      symbol,
      startLine: start + 1,
      endLine: end,
      signature: "",
      doc: "",
      text: cap(body),
    });
    if (end === lines.length) break;
  }
  return chunks;
}

/** Nodes that wrap a declaration: its doc comment and line range start at the wrapper. */
const WRAPPERS = new Set(["export_statement", "decorated_definition", "template_declaration"]);
/** Siblings between a declaration and its doc comment that do not end the doc. */
const SKIPPED = new Set(["attribute_item", "decorator"]);

interface Scope {
  chunk: Chunk;
  /** The class whose methods this scope declares, if any. */
  owner?: string;
}

/** Where a node is: its scope, and the function or method whose calls it makes. */
interface Context {
  scope: Scope;
  fn: { chunk: Chunk; owner?: string } | undefined;
}

/** Per language spec, a table by node type id: 1 for the types the spec reacts to. */
const reacting = new WeakMap<LanguageSpec, { language: Language; table: Uint8Array }>();

function reactingTypes(spec: LanguageSpec, language: Language): Uint8Array {
  const known = reacting.get(spec);
  if (known?.language === language) return known.table;
  const types = new Set(spec.nodeTypes);
  const table = new Uint8Array(language.types.length);
  for (let id = 0; id < table.length; id++) table[id] = types.has(language.types[id]) ? 1 : 0;
  reacting.set(spec, { language, table });
  return table;
}

class Walker {
  readonly chunks: Chunk[] = [];
  readonly #relations: Relation[] = [];
  readonly #calls = new Map<string, { from: Chunk; owner?: string; names: Set<string> }>();
  /** Heritage declared apart from its type (a Rust `impl Trait for Type`), resolved at the end. */
  readonly #pendingHeritage: { owner: string; heritage: Heritage[] }[] = [];
  readonly #ids = new Set<string>();
  /** Names imported from relative modules, by the local name they go by. */
  readonly #bindings = new Map<string, Binding>();
  readonly #lines: string[];
  readonly #file: Chunk;

  constructor(readonly path: string, readonly text: string, readonly spec: LanguageSpec) {
    this.#lines = splitLines(text);
    this.#file = {
      id: chunkId(path, "FILE", baseName(path), 1),
      path,
      kind: "FILE",
      symbol: baseName(path),
      startLine: 1,
      endLine: Math.max(1, this.#lines.length),
      signature: "",
      doc: "",
      text: cap(text),
    };
    this.chunks.push(this.#file);
  }

  /**
   * Visits the root and its named descendants in document order (not those under an anonymous
   * node), with a cursor and a stack of contexts, one per level: deep nesting must not throw.
   * Only nodes of a type the language reacts to become Node objects and are visited.
   */
  walk(tree: Tree): void {
    const reacts = reactingTypes(this.spec, tree.language);
    const cursor = tree.walk();
    try {
      const root: Context = { scope: { chunk: this.#file }, fn: undefined };
      const contexts = [reacts[cursor.nodeTypeId] ? this.#visit(cursor.currentNode, root) : root];
      if (!cursor.gotoFirstChild()) return;
      for (;;) {
        if (cursor.nodeIsNamed) {
          const outer = contexts[contexts.length - 1];
          const inner = reacts[cursor.nodeTypeId] ? this.#visit(cursor.currentNode, outer) : outer;
          if (cursor.gotoFirstChild()) {
            contexts.push(inner);
            continue;
          }
        }
        while (!cursor.gotoNextSibling()) {
          contexts.pop();
          if (contexts.length === 0 || !cursor.gotoParent()) return;
        }
      }
    } finally {
      cursor.delete();
    }
  }

  /** Records what `node` declares, imports and calls; returns the context for its children. */
  #visit(node: Node, { scope, fn }: Context): Context {
    const spec = this.spec;
    for (const name of spec.imports(node)) {
      if (name) this.#relations.push({ from: this.#file.id, kind: "IMPORTS", name });
    }
    for (const binding of spec.bindings?.(node) ?? []) {
      if (binding.local && binding.module.startsWith(".")) {
        this.#bindings.set(binding.local, binding);
      }
    }
    const callee = fn ? spec.callee(node) : undefined;
    if (fn && callee) this.#call(fn.chunk, fn.owner, callee);

    let inner = scope;
    let innerFn = fn;
    const declaration = fn ? undefined : spec.declaration(node);
    if (declaration && declaration.name) {
      const owner = declaration.owner || scope.owner;
      const method = declaration.kind === "FUNCTION" && owner !== undefined;
      const kind: ChunkKind = method ? "METHOD" : declaration.kind;
      const symbol = method ? `${owner}.${declaration.name}` : declaration.name;
      const chunk = this.#chunk(node, kind, symbol, declaration.node, declaration.body, scope);
      if (kind === "CLASS" || kind === "INTERFACE") {
        this.#heritage(chunk, spec.heritage(node));
        inner = { chunk, owner: declaration.name };
      } else {
        inner = { chunk };
        innerFn = { chunk, owner };
      }
    } else {
      const block = fn ? undefined : spec.scope?.(node);
      if (block) {
        inner = { chunk: scope.chunk, owner: block.owner };
        this.#pendingHeritage.push({ owner: block.owner, heritage: block.heritage });
      }
    }
    return { scope: inner, fn: innerFn };
  }

  #chunk(
    node: Node,
    kind: ChunkKind,
    symbol: string,
    start: Node,
    body: Node | null,
    scope: Scope,
  ): Chunk {
    let outer = node;
    while (outer.parent && wraps(outer.parent)) outer = outer.parent;
    const startLine = outer.startPosition.row + 1;
    const endLine = outer.endPosition.row + 1;
    const signatureEnd = signatureEndOf(start, body);
    const signatureText = signatureEnd < 0
      ? this.#lines[start.startPosition.row] ?? ""
      : this.text.slice(
        start.startIndex,
        Math.min(signatureEnd, start.startIndex + 4 * SIGNATURE_MAX),
      );
    const innerDoc = body ? this.spec.innerDoc?.(body) : undefined;
    const chunk: Chunk = {
      id: chunkId(this.path, kind, symbol, startLine),
      path: this.path,
      kind,
      symbol,
      startLine,
      endLine,
      signature: signatureText.replace(/\s+/g, " ").replace(/\s*\{?\s*$/, "").trim()
        .slice(0, SIGNATURE_MAX),
      doc: innerDoc !== undefined ? dedent(innerDoc) : docAbove(outer),
      text: cap(this.#lines.slice(startLine - 1, endLine).join("\n")),
      parent: scope.chunk.id,
    };
    // Two declarations of one symbol on one line would share an id: the first one stands.
    if (this.#ids.has(chunk.id)) return chunk;
    this.#ids.add(chunk.id);
    this.chunks.push(chunk);
    this.#relations.push({ from: scope.chunk.id, kind: "CONTAINS", to: chunk.id, name: symbol });
    return chunk;
  }

  #heritage(chunk: Chunk, heritage: Heritage[]): void {
    for (const { kind, name } of heritage) this.#relations.push({ from: chunk.id, kind, name });
  }

  #call(from: Chunk, owner: string | undefined, callee: string): void {
    const name = callee.replace(/\s+/g, "");
    if (name.length > NAME_MAX || !CALLEE.test(name)) return;
    let entry = this.#calls.get(from.id);
    if (!entry) this.#calls.set(from.id, entry = { from, owner, names: new Set() });
    entry.names.add(name);
  }

  #imported(name: string): ImportTarget | undefined {
    return this.#bindings.size === 0 ? undefined : importTarget(this.path, name, this.#bindings);
  }

  /** The relations, with calls and heritage resolved against this file's chunks. */
  resolve(): Relation[] {
    const bySymbol = new Map<string, Chunk>();
    for (const chunk of this.chunks) {
      if (chunk.kind !== "FILE" && !bySymbol.has(chunk.symbol)) bySymbol.set(chunk.symbol, chunk);
    }
    const relations = this.#relations;
    for (const { owner, heritage } of this.#pendingHeritage) {
      const from = bySymbol.get(owner) ?? this.#file;
      for (const { kind, name } of heritage) relations.push({ from: from.id, kind, name });
    }
    for (const relation of relations) {
      if (relation.kind === "EXTENDS" || relation.kind === "IMPLEMENTS") {
        const target = bySymbol.get(relation.name.replace(/<.*$/s, ""));
        if (target && target.kind !== "FUNCTION" && target.kind !== "METHOD") {
          relation.to = target.id;
        }
      }
    }
    for (const { from, owner, names } of this.#calls.values()) {
      for (const name of names) {
        const target = resolveCall(name, owner, bySymbol);
        const imported = target ? undefined : this.#imported(name);
        relations.push({
          from: from.id,
          kind: "CALLS",
          ...(target ? { to: target.id } : {}),
          name,
          ...(imported ? { target: imported } : {}),
        });
      }
    }
    return relations;
  }
}

/** The module base and exported name of `b(…)` or `ns.f(…)` when `b`/`ns` is imported here. */
function importTarget(
  path: string,
  name: string,
  bindings: Map<string, Binding>,
): ImportTarget | undefined {
  const parts = name.split(/\??\./);
  const binding = bindings.get(parts[0]);
  if (!binding || binding.name === "default") return undefined;
  let symbol: string;
  if (binding.name === "*") {
    if (parts.length !== 2) return undefined;
    symbol = parts[1];
  } else {
    if (parts.length !== 1) return undefined;
    symbol = binding.name;
  }
  const base = joinPath(path.slice(0, path.lastIndexOf("/") + 1), binding.module);
  return base === undefined ? undefined : { base: pathBase(base), symbol };
}

/** `dir/` + a relative module, `.` and `..` folded; undefined when it leaves the workspace. */
function joinPath(dir: string, module: string): string | undefined {
  const out: string[] = [];
  for (const part of `${dir}${module}`.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.pop() === undefined) return undefined;
    } else out.push(part);
  }
  return out.join("/");
}

/** `f` → function f or (inside a class) its method; `this.f`/`self.f`/`Self::f` → the method. */
function resolveCall(
  name: string,
  owner: string | undefined,
  bySymbol: Map<string, Chunk>,
): Chunk | undefined {
  const own = /^(?:this\.|self\.|Self::)([\w$]+)$/.exec(name);
  if (own) return owner ? callable(bySymbol.get(`${owner}.${own[1]}`)) : undefined;
  if (/^[\w$]+$/.test(name)) {
    return (owner ? callable(bySymbol.get(`${owner}.${name}`)) : undefined) ??
      callable(bySymbol.get(name));
  }
  const qualified = /^([\w$]+)(?:\.|::)([\w$]+)$/.exec(name);
  return qualified ? callable(bySymbol.get(`${qualified[1]}.${qualified[2]}`)) : undefined;
}

function callable(chunk: Chunk | undefined): Chunk | undefined {
  return chunk && (chunk.kind === "FUNCTION" || chunk.kind === "METHOD") ? chunk : undefined;
}

function wraps(node: Node): boolean {
  // A Go `type (…)` group holds several declarations: each keeps its own range.
  return WRAPPERS.has(node.type) ||
    (node.type === "type_declaration" && node.namedChildCount === 1);
}

/** Where a signature ends: at the body, or at a comment before it (`def f():  # note`). */
function signatureEndOf(start: Node, body: Node | null): number {
  if (!body || body.startIndex <= start.startIndex) return -1;
  let end = body.startIndex;
  for (let i = 0; i < start.childCount; i++) {
    const child = start.child(i);
    if (!child || child.startIndex >= end) break;
    if (child.type.includes("comment")) end = child.startIndex;
  }
  return end;
}

/** The comments right above `node` (no blank line between), markers stripped. */
function docAbove(node: Node): string {
  const comments: string[] = [];
  let row = node.startPosition.row;
  let sibling = node.previousNamedSibling;
  while (sibling) {
    if (sibling.endPosition.row < row - 1) break;
    if (sibling.type.includes("comment")) comments.unshift(sibling.text);
    else if (!SKIPPED.has(sibling.type)) break;
    row = sibling.startPosition.row;
    sibling = sibling.previousNamedSibling;
  }
  return comments.map(stripComment).join("\n").trim();
}

function stripComment(comment: string): string {
  return comment
    .replace(/^\s*\/\*+!?/, "")
    // From the first star of a run only: tried at each star, a long run took quadratic time.
    .replace(/(?<!\*)\*+\/\s*$/, "")
    .replace(/<\/?summary>/g, "")
    .split("\n")
    .map((line) => line.replace(/^\s*(?:\/\/[\/!]?|#+|\*(?!\/))\s?/, "").trimEnd())
    .join("\n")
    .trim();
}

function dedent(text: string): string {
  const lines = text.split("\n");
  const indents = lines.slice(1).filter((line) => line.trim())
    .map((line) => line.length - line.trimStart().length);
  const strip = indents.length ? Math.min(...indents) : 0;
  return [lines[0], ...lines.slice(1).map((line) => line.slice(strip))].join("\n").trim();
}
