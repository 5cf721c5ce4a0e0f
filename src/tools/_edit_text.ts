/**
 * What `edit` and `multi_edit` share: the file to change, checked and read as UTF-8 text, and
 * its line endings kept.
 */
import { ToolError } from "../core/observation.ts";
import type { ToolContext } from "./define.ts";
import { decodeUtf8Strict, keptMode, looksBinary } from "./file_io.ts";
import { type CheckedPath, checkPath } from "./paths.ts";
import { openVerified } from "./verified_io.ts";
import type { WriteToolOptions } from "./write.ts";

/**
 * The largest file `edit` and `multi_edit` change, and the largest text an edit may leave, in
 * bytes (UTF-16 code units for the text): the whole file is held, split and diffed in memory,
 * and a `replace_all` that multiplies it could otherwise take the tool worker down.
 */
export const MAX_EDIT_BYTES = 16 * 1024 * 1024;

/** A file an edit may change: checked for writing, with its text and permission bits. */
export interface EditableText {
  checked: CheckedPath;
  /** Its real path. */
  real: string;
  text: string;
  /** Its permission bits, kept by the write. */
  mode: number | undefined;
}

/**
 * Checks `path` for writing and reads it as text.
 * @throws {ToolError} NOT_FOUND for a missing file (write creates files), EXECUTION_FAILED for a
 * folder, a binary file or text that is not UTF-8; the path checks' errors as they are.
 */
export async function readEditableText(
  path: string,
  ctx: ToolContext,
  options: WriteToolOptions,
): Promise<EditableText> {
  const fail = (detail: string) =>
    new ToolError("EXECUTION_FAILED", `Cannot edit "${path}": ${detail}`);
  const checked = await checkPath(ctx.workspace, path, {
    forWrite: true,
    allowProtected: options.allowProtectedWrites,
    roots: ctx.roots,
  });
  const { real, info } = checked;
  if (info === null) {
    throw new ToolError(
      "NOT_FOUND",
      `Cannot edit "${path}": not found; use write to create a new file`,
    );
  }
  if (info.isDirectory) throw fail("it is a directory");
  if (info.size > MAX_EDIT_BYTES) {
    throw fail(
      `the file is ${info.size} bytes, over the ${MAX_EDIT_BYTES} an edit changes; ` +
        "use bash (sed, a script) or write",
    );
  }
  const bytes = readChecked(checked);
  if (looksBinary(bytes)) throw fail(`binary file (${bytes.length} bytes)`);
  const text = decodeUtf8Strict(bytes);
  if (text === null) throw fail("the file is not valid UTF-8 text");
  const mode = typeof info.mode === "number" ? keptMode(info.mode) : undefined;
  return { checked, real, text, mode };
}

function readChecked(checked: CheckedPath): Uint8Array {
  using file = openVerified(checked);
  return file.readAll();
}

/** "\r\n" when most line breaks in `text` are CRLF, else "\n". */
export function dominantEol(text: string): string {
  const all = text.split("\n").length - 1;
  const crlf = text.split("\r\n").length - 1;
  return crlf > all - crlf ? "\r\n" : "\n";
}

/** `text` with every line break made `eol`. */
export function withEol(text: string, eol: string): string {
  return text.replace(/\r?\n/g, eol);
}
