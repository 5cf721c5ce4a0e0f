/** Hand-built chunked files for the code index's tests. */
import {
  type Chunk,
  type ChunkedFile,
  chunkId,
  type ChunkKind,
  type Relation,
} from "../../src/index/types.ts";

/** A chunk of `path` with the given kind and symbol; the other fields from `fields` or derived. */
export function chunk(
  path: string,
  kind: ChunkKind,
  symbol: string,
  fields: Partial<Chunk> & { startLine?: number } = {},
): Chunk {
  const startLine = fields.startLine ?? 1;
  return {
    id: chunkId(path, kind, symbol, startLine),
    path,
    kind,
    symbol,
    startLine,
    endLine: fields.endLine ?? startLine + 5,
    signature: fields.signature ?? "",
    doc: fields.doc ?? "",
    text: fields.text ?? "",
    ...(fields.parent === undefined ? {} : { parent: fields.parent }),
  };
}

/** A chunked file of `chunks` and `relations` whose hash is `hash`. */
export function file(
  path: string,
  chunks: Chunk[],
  options: { hash?: string; relations?: Relation[]; language?: string } = {},
): ChunkedFile {
  return {
    path,
    language: options.language ?? "typescript",
    hash: options.hash ?? `hash-of-${path}`,
    chunks,
    relations: options.relations ?? [],
  };
}

/** A fresh temporary folder and the path of an index file inside it. */
export function tempIndex(): { dir: string; file: string } {
  const dir = Deno.makeTempDirSync({ prefix: "tern-index-" });
  return { dir, file: `${dir}/index.db` };
}
