/**
 * The code index's data: chunks of source (a file, a class, a function, or a window of lines)
 * and the relations between them, as the chunker produces them and the store keeps them.
 */

/** What a chunk is. */
export type ChunkKind = "FILE" | "CLASS" | "INTERFACE" | "FUNCTION" | "METHOD" | "WINDOW";

/** One piece of a file the index can return. */
export interface Chunk {
  /** Stable within a file: `<path>#<kind>:<symbol>:<startLine>` (see `chunkId`). */
  id: string;
  /** Workspace-relative path, `/`-separated. */
  path: string;
  kind: ChunkKind;
  /** The symbol's name (`Class.method` for a method); the file name for FILE and WINDOW. */
  symbol: string;
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  /** The declaration's first line(s), up to the body. */
  signature: string;
  /** The doc comment right above it, without comment markers; "" when none. */
  doc: string;
  /** The chunk's text (capped by the chunker). */
  text: string;
  /** The id of the chunk that contains it; undefined for FILE and WINDOW chunks. */
  parent?: string;
}

/** How two chunks (or a chunk and a name not resolved to one) relate. */
export type RelationKind = "CONTAINS" | "IMPORTS" | "EXTENDS" | "IMPLEMENTS" | "CALLS";

/** A relation from a chunk to another chunk, or to a name the chunker could not resolve. */
export interface Relation {
  from: string;
  kind: RelationKind;
  /** The target chunk's id when known in this file or through an import, else undefined. */
  to?: string;
  /** The name as written (the imported module for IMPORTS, the callee for CALLS, …). */
  name: string;
  /**
   * For a call to an imported name that this file cannot resolve: the imported file's
   * workspace path without its extension (`src/util` for `./util.js`) and the name it exports
   * there. The store resolves `to` from it against the files it holds.
   */
  target?: ImportTarget;
}

/** Where an imported name is declared (see {@linkcode Relation.target}). */
export interface ImportTarget {
  /** Workspace-relative, `/`-separated, without extension; `dir` also matches `dir/index.*`. */
  base: string;
  symbol: string;
}

/** `path` without its last extension: the base an {@linkcode ImportTarget} names. */
export function pathBase(path: string): string {
  return path.replace(/\.[^./]*$/, "");
}

/** A file as chunked: its chunks, relations, and the language it was parsed as. */
export interface ChunkedFile {
  path: string;
  /** The grammar used, or "text" for line windows. */
  language: string;
  /** sha-256 of the content, hex. */
  hash: string;
  chunks: Chunk[];
  relations: Relation[];
  /**
   * Why source of a language the chunker parses was cut into line windows instead (its parse
   * ran out of time, or the parser failed on it), e.g. "its parse took longer than 1.1 s";
   * absent otherwise.
   */
  unparsed?: string;
  /**
   * The first line not indexed when the file made more chunks than the chunker keeps of one
   * file (chunker.ts `INDEX_FILE_MAX_CHUNKS`); absent otherwise.
   */
  cutAtLine?: number;
}

/** The id of a chunk: stable across re-indexing while its kind, symbol and start line stay. */
export function chunkId(path: string, kind: ChunkKind, symbol: string, startLine: number): string {
  return `${path}#${kind}:${symbol}:${startLine}`;
}

/**
 * The last part of a symbol (`area` of `Square.area`): what the store indexes, so that finding
 * the definitions of a name needs no scan of every symbol.
 */
export function symbolTail(symbol: string): string {
  return symbol.slice(symbol.lastIndexOf(".") + 1);
}

/**
 * The last part of a name as written in a relation, without type arguments: `parse` of
 * `this.parse`, `a::parse`, `a->parse`, `parse<T>` and `Box<T>.parse`. What the store indexes,
 * so that finding who calls or extends a name needs no scan of every relation.
 */
export function nameTail(name: string): string {
  let plain = name;
  for (let before = ""; before !== plain;) {
    before = plain;
    plain = plain.replace(/<[^<>]*>/g, "");
  }
  const open = plain.indexOf("<");
  if (open >= 0) plain = plain.slice(0, open);
  return plain.split(/\??\.|::|->/).pop() ?? plain;
}
