/**
 * The tool worker's wire protocol. The process backend speaks it as JSON lines on stdin and
 * stdout; the Worker backend posts the same objects as messages.
 *
 * Host → child: `{id, type: "call", tool, args, workspace, roots?}` and `{id, type: "cancel"}`.
 * Child → host: `{type: "ready"}` once the handler is loaded, `{id, type: "update", text}`
 * while a call runs, and exactly one `{id, type: "result", observation}` per call.
 */
import type { Observation, ToolDetails, ToolErrorCode } from "../../core/observation.ts";
import type { ImagePart } from "../../core/messages.ts";
import { imageProblem, MAX_IMAGE_BYTES } from "../../core/image_part.ts";
import { streamLines } from "../../core/line_splitter.ts";

/** Starts a tool call in the child. */
export interface CallMessage {
  id: number;
  type: "call";
  tool: string;
  args: unknown;
  /** Absolute real path of the workspace the tool resolves paths against. */
  workspace: string;
  /** Folders besides the workspace the tool may use; absent means none. */
  roots?: CallRoots;
}

/**
 * Folders besides the workspace (absolute real paths, as request_permissions granted them) that
 * a file tool may read (a read or a write root) or write (a write root only).
 */
export interface CallRoots {
  read: readonly string[];
  write: readonly string[];
}

/** Asks the child to abort call `id`; its result still follows. */
export interface CancelMessage {
  id: number;
  type: "cancel";
}

export type HostMessage = CallMessage | CancelMessage;

export type ChildMessage =
  | { type: "ready" }
  | { id: number; type: "update"; text: string }
  | { id: number; type: "result"; observation: Observation };

/**
 * Not a tool: the code index's read of one workspace file (`{ path, maxBytes }`), which tern
 * asks of the worker itself, never the model (no tool of that name is offered), so that it runs
 * in bubblewrap's view: what the commands' view hides is not there, and a folder swapped for a
 * link to a hidden one while the index walks leads nowhere. tern's own process could be raced
 * past its path checks (Deno has no `openat`). SUCCEEDED with the text; NOT_FOUND when the file
 * is gone; POLICY_DENIED when it was refused (a link on its path, not a regular file, hard links,
 * too large).
 */
export const INDEX_READ = "index_read";

/** What the handler module receives for one call. */
export interface ToolCallRequest {
  tool: string;
  args: unknown;
  workspace: string;
  /** Folders besides the workspace the tool may use; absent means none. */
  roots?: CallRoots;
}

/** What the handler module may use while a call runs. */
export interface ToolCallContext {
  /** Fires when the host cancels the call or its time is up. */
  signal: AbortSignal;
  /** Sends progress text to the host (`onUpdate` of the call). */
  update(text: string): void;
}

/**
 * The export a handler module must provide under the name `handleToolCall`. It should return
 * an Observation for every outcome; a throw becomes EXECUTION_FAILED.
 */
export type ToolCallHandler = (
  request: ToolCallRequest,
  ctx: ToolCallContext,
) => Promise<Observation>;

const ERROR_CODES: readonly ToolErrorCode[] = [
  "INVALID_ARGUMENTS",
  "UNKNOWN_TOOL",
  "POLICY_DENIED",
  "NOT_FOUND",
  "TIMEOUT",
  "CANCELLED",
  "EXECUTION_FAILED",
];

type Fields = Record<string, unknown>;

function isObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0;
}

/** The host message `value` describes, or null when it is not one. */
export function parseHostMessage(value: unknown): HostMessage | null {
  if (!isObject(value) || !isId(value.id)) return null;
  if (value.type === "cancel") return { id: value.id, type: "cancel" };
  if (value.type !== "call") return null;
  if (typeof value.tool !== "string" || typeof value.workspace !== "string") return null;
  const call: CallMessage = {
    id: value.id,
    type: "call",
    tool: value.tool,
    args: value.args,
    workspace: value.workspace,
  };
  if (value.roots === undefined) return call;
  const roots = parseRoots(value.roots);
  return roots === null ? null : { ...call, roots };
}

function parseRoots(value: unknown): CallRoots | null {
  if (!isObject(value) || !isStringArray(value.read) || !isStringArray(value.write)) return null;
  return { read: [...value.read], write: [...value.write] };
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

/** The child message `value` describes, or null when it is not one. */
export function parseChildMessage(value: unknown): ChildMessage | null {
  if (!isObject(value)) return null;
  if (value.type === "ready") return { type: "ready" };
  if (!isId(value.id)) return null;
  if (value.type === "update") {
    return typeof value.text === "string"
      ? { id: value.id, type: "update", text: value.text }
      : null;
  }
  if (value.type !== "result") return null;
  // A result tern cannot take (a malformed observation or image) still ends its call, at once
  // and as a failure: dropped, the call would wait for its timeout.
  const observation = parseObservation(value.observation) ?? MALFORMED_RESULT;
  return { id: value.id, type: "result", observation };
}

/** What a call returns when the worker's result for it is not well formed. */
export const MALFORMED_RESULT: Observation = {
  status: "ERROR",
  code: "EXECUTION_FAILED",
  message: "The tool worker sent a result tern does not accept (not a well-formed observation, " +
    "or an image that is not a whole image within the limits); the call's result is not used",
};

function parseObservation(value: unknown): Observation | null {
  if (!isObject(value)) return null;
  if (value.status === "SUCCEEDED" && typeof value.output === "string") {
    const observation: Observation = { status: "SUCCEEDED", output: value.output };
    // UI-only details pass through as the handler built them.
    if (isObject(value.details) && typeof value.details.kind === "string") {
      observation.details = value.details as unknown as ToolDetails;
    }
    if (value.images !== undefined) {
      const images = parseImages(value.images);
      if (images === null) return null;
      observation.images = images;
    }
    return observation;
  }
  const code = ERROR_CODES.find((known) => known === value.code);
  if (value.status === "ERROR" && code !== undefined && typeof value.message === "string") {
    return { status: "ERROR", code, message: value.message };
  }
  return null;
}

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
/** Base64 of MAX_IMAGE_BYTES, rounded up. */
const MAX_IMAGE_BASE64 = Math.ceil(MAX_IMAGE_BYTES / 3) * 4;
/** Most images one result may carry (read returns one). */
const MAX_RESULT_IMAGES = 4;

/**
 * The images of a result (read of an image file), or null when they are not well formed: each
 * of a known media type, with a SHA-256 in hex, its data plain base64 of an image that passes the
 * checks an image file's does (`imageProblem`: that type by magic number, at most
 * MAX_IMAGE_BYTES, a whole image, no side over the limit).
 */
function parseImages(value: unknown): ImagePart[] | null {
  if (!Array.isArray(value) || value.length > MAX_RESULT_IMAGES) return null;
  const images: ImagePart[] = [];
  for (const item of value) {
    if (
      !isObject(item) || typeof item.mediaType !== "string" || !IMAGE_TYPES.has(item.mediaType) ||
      typeof item.data !== "string" || item.data.length > MAX_IMAGE_BASE64 ||
      typeof item.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(item.sha256)
    ) {
      return null;
    }
    // The bytes must be base64 of a whole image of the type named: a provider refuses any other,
    // and the session would carry the refused image into every later request.
    // As tern writes base64 (no spaces, padded): the data goes out as it is.
    const bytes = decodeBase64(item.data);
    if (bytes === undefined || bytes.toBase64() !== item.data) return null;
    if (imageProblem(bytes, item.mediaType) !== undefined) return null;
    images.push({
      mediaType: item.mediaType as ImagePart["mediaType"],
      data: item.data,
      sha256: item.sha256,
    });
  }
  return images;
}

function decodeBase64(data: string): Uint8Array | undefined {
  try {
    return Uint8Array.fromBase64(data);
  } catch {
    return undefined;
  }
}

/**
 * Splits a byte stream into lines of text (without the newline) and parses each as JSON.
 * Lines that are not JSON come out as `undefined`, so a stray print cannot stop the reader.
 */
export async function* readJsonLines(
  stream: ReadableStream<Uint8Array>,
): AsyncGenerator<unknown> {
  for await (const line of streamLines(stream)) {
    if (line.trim() !== "") yield parseJson(line);
  }
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** One message as a JSON line, newline included. */
export function encodeLine(message: HostMessage | ChildMessage): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(message) + "\n");
}
