/** The `read` tool: a text file as numbered lines, a window at a time. */
import * as z from "../core/zod.ts";
import { ToolError } from "../core/observation.ts";
import { defineTool, type Tool, type ToolOutput } from "./define.ts";
import { BINARY_SNIFF_BYTES, looksBinary } from "./file_io.ts";
import { sniffImageType } from "../core/image_type.ts";
import type { ImageMediaType } from "../core/messages.ts";
import { imagePart, MAX_IMAGE_BYTES, tooLargeMessage } from "../core/image_part.ts";
import { openVerified, type VerifiedFile } from "./verified_io.ts";
import { checkPath, displayPath } from "./paths.ts";

/** Lines shown when `limit` is not given. */
export const DEFAULT_READ_LIMIT = 2000;
/** Longer lines are cut to this many characters. */
export const MAX_LINE_CHARS = 2000;
/** Files larger than this are only read with an explicit `offset` or `limit`. */
export const MAX_READ_BYTES = 10 * 1024 * 1024;
/** Budget for the numbered lines of one call; the window ends early when it is spent. */
const OUTPUT_BUDGET_CHARS = 50_000;

export const readParameters = z.strictObject({
  path: z.string().min(1).describe("Path of the file, relative to the workspace root"),
  offset: z.number().int().min(1).optional().describe(
    "Line number to start from (1-based); default 1",
  ),
  limit: z.number().int().min(1).optional().describe(
    `Maximum number of lines to return; default ${DEFAULT_READ_LIMIT}`,
  ),
});

export type ReadArgs = z.infer<typeof readParameters>;

const DESCRIPTION = `Read a text file from the workspace. Paths are relative to the workspace root.
Returns numbered lines in "cat -n" style (line number, tab, text); the numbers are not part of the file.
Reads up to ${DEFAULT_READ_LIMIT} lines; use offset and limit to read other parts of long files.
Lines longer than ${MAX_LINE_CHARS} characters are cut. Binary files and folders are refused (use list for folders).
A PNG, JPEG, GIF or WebP image (up to ${
  MAX_IMAGE_BYTES / 1024 / 1024
} MB) is returned as an image, for models that take images.`;

/** Creates the `read` tool. */
export function createReadTool(): Tool {
  return defineTool({
    name: "read",
    description: DESCRIPTION,
    parameters: readParameters,
    readOnly: true,
    subagentBase: true,
    runsIn: "worker",
    paths: (args) => [{ path: args.path, write: false }],
    maxOutputChars: OUTPUT_BUDGET_CHARS + 10_000,
    async execute(args, ctx) {
      const checked = await checkPath(ctx.workspace, args.path, { roots: ctx.roots });
      const info = checked.info;
      if (info === null) {
        throw new ToolError(
          "NOT_FOUND",
          `Cannot read "${args.path}": not found; use glob or list to find the right path`,
        );
      }
      if (info.isDirectory) {
        throw new ToolError(
          "EXECUTION_FAILED",
          `Cannot read "${args.path}": it is a directory; use list to see its entries`,
        );
      }
      using file = openVerified(checked);
      const explicitWindow = args.offset !== undefined || args.limit !== undefined;
      if (file.size > MAX_READ_BYTES && !explicitWindow) {
        throw new ToolError(
          "EXECUTION_FAILED",
          `Cannot read "${args.path}": file is too large (${file.size} bytes, limit ${MAX_READ_BYTES}); ` +
            "read a part of it with offset and limit, or search it with grep",
        );
      }
      const head = file.head(BINARY_SNIFF_BYTES);
      const image = sniffImageType(head);
      if (image !== undefined) {
        return await readImage(file, image, args.path, displayPath(ctx.workspace, checked.real));
      }
      if (looksBinary(head)) {
        throw new ToolError(
          "EXECUTION_FAILED",
          `Cannot read "${args.path}": binary file (${file.size} bytes)`,
        );
      }
      const offset = args.offset ?? 1;
      const limit = args.limit ?? DEFAULT_READ_LIMIT;
      const window = await readWindow(file, offset, limit, {
        countAll: file.size <= MAX_READ_BYTES,
        signal: ctx.signal,
      });
      const path = displayPath(ctx.workspace, checked.real);
      if (window.total === 0) {
        return {
          output: "(empty file)",
          details: { kind: "file", path, lines: 0, truncated: false },
        };
      }
      if (window.lines.length === 0) {
        const size = window.total === null ? "" : ` (${window.total} lines)`;
        throw new ToolError(
          "INVALID_ARGUMENTS",
          `Cannot read "${args.path}": offset ${offset} is past the end of the file${size}`,
        );
      }
      const last = offset + window.lines.length - 1;
      const note = windowNote(offset, last, window.total);
      const output = window.lines.join("\n") + (note === "" ? "" : `\n\n${note}`);
      return {
        output,
        details: { kind: "file", path, lines: window.lines.length, truncated: note !== "" },
      };
    },
  });
}

/**
 * An image file as an image part, its bytes from the same verified handle as a text read (so
 * from the worker's confined view). Over the size limit it is refused, never downscaled. A
 * model that takes no images gets a note instead (the router replaces the part).
 */
async function readImage(
  file: VerifiedFile,
  type: ImageMediaType,
  path: string,
  shown: string,
): Promise<ToolOutput> {
  if (file.size > MAX_IMAGE_BYTES) {
    throw new ToolError("EXECUTION_FAILED", tooLargeMessage(path, file.size));
  }
  // At most one byte past the limit: a file grown since the size was checked is refused by
  // imagePart, never read whole into memory.
  const part = await imagePart(file.head(MAX_IMAGE_BYTES + 1), path);
  return {
    output: `Image "${shown}" (${type}, ${file.size} bytes) follows.`,
    details: { kind: "file", path: shown, lines: 0, truncated: false },
    images: [part],
  };
}

interface Window {
  /** Numbered lines, ready to print. */
  lines: string[];
  /** Lines in the whole file, or null when it was not read to the end. */
  total: number | null;
}

async function readWindow(
  file: VerifiedFile,
  offset: number,
  limit: number,
  options: { countAll: boolean; signal: AbortSignal },
): Promise<Window> {
  const lines: string[] = [];
  let spent = 0;
  let full = false;
  let n = 0;
  for await (const text of readLines(file, options.signal)) {
    n++;
    if (n < offset || full) {
      if (full && !options.countAll) return { lines, total: null };
      continue;
    }
    const numbered = `${String(n).padStart(6)}\t${cutLine(text)}`;
    if (lines.length > 0 && spent + numbered.length + 1 > OUTPUT_BUDGET_CHARS) {
      full = true;
      continue;
    }
    lines.push(numbered);
    spent += numbered.length + 1;
    if (lines.length >= limit) full = true;
  }
  return { lines, total: n };
}

function windowNote(first: number, last: number, total: number | null): string {
  if (total === null) {
    return `(showing lines ${first}-${last}; use offset=${last + 1} to read more)`;
  }
  if (first === 1 && last === total) return "";
  const more = last < total ? `; use offset=${last + 1} to read more` : "";
  return `(showing lines ${first}-${last} of ${total}${more})`;
}

function cutLine(text: string): string {
  const line = text.endsWith("\r") ? text.slice(0, -1) : text;
  if (line.length <= MAX_LINE_CHARS) return line;
  return `${line.slice(0, MAX_LINE_CHARS)} [... line cut at ${MAX_LINE_CHARS} characters]`;
}

/**
 * Yields the lines of a file without their "\n". A line longer than MAX_LINE_CHARS is yielded
 * cut to MAX_LINE_CHARS + 1 characters, so memory stays bounded for huge single-line files.
 * Throws when `signal` fires, at the next chunk: lines skipped before the offset, or one line
 * of gigabytes, are read with it in view.
 */
async function* readLines(file: VerifiedFile, signal: AbortSignal): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = "";
  const keep = MAX_LINE_CHARS + 2; // one extra for a "\r", one to know the line was longer
  for await (const chunk of file.chunks(undefined, signal)) {
    const text = decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
      yield (pending + text.slice(start, nl)).slice(0, keep);
      pending = "";
      start = nl + 1;
    }
    if (pending.length < keep) pending += text.slice(start, start + keep - pending.length);
  }
  pending += decoder.decode();
  if (pending.length > 0) yield pending.slice(0, keep);
}
