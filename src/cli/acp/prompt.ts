/**
 * An ACP prompt (content blocks) as the one message tern's turn takes. Text is kept as it is;
 * a file the editor embeds (`resource`, its buffer as the editor holds it, saved or not) and a
 * file it links (`resource_link`) read through the editor's `fs/read_text_file` when it offers
 * that, so the model sees the unsaved buffer, come after it as marked context.
 *
 * A file is attached only when the model could read it with its own tools, as for the terminal's
 * `@` mentions (src/harness/read_guard.ts): a repository's `notes.md -> ~/.ssh/id_rsa`, a `.env`
 * holding tern's key or a file the person's deny rules hide is never asked of the editor, and
 * the editor's embedded text of such a file is left out too. What is left out is said in its
 * place, and to the person.
 */
import type { ContentBlock } from "@agentclientprotocol/sdk";
import { fileURLToPath } from "node:url";
import type { ReadRefusal } from "../../config/workspace_file.ts";
import { basename, dirname, resolve } from "../../core/path.ts";
import { isInside } from "../../tools/paths.ts";

/** Largest file text added to a message, in characters; the rest is cut and said so. */
export const ATTACHED_FILE_CHARS = 200_000;

/** Reads a file as the editor holds it; absent when the editor offers no `fs` reads. */
export type ReadBuffer = (path: string) => Promise<string>;

/** How {@linkcode promptMessage} decides and reads the files a prompt names. */
export interface PromptFiles {
  /** The session's working directory: an absolute real path. */
  workspace: string;
  /**
   * What tern may not read for the model (Conversation.readRefusal()); asked at the first file
   * URI, once. A failure refuses every file.
   */
  refusal: () => Promise<ReadRefusal>;
  /** The editor's buffer reads; absent when the editor offers none. */
  readBuffer?: ReadBuffer;
  /**
   * The keys tern holds masked (Conversation.maskKnownKeys): applied to each attached file's
   * text, as to the read tool's output, so a file that holds a key does not hand it to the
   * model. Default: unchanged.
   */
  mask?: (text: string) => string;
}

/** The message for a prompt, and the files left out of it. */
export interface PromptMessage {
  text: string;
  /** The prompt's own text blocks (the person's words), without what is attached. */
  typed: string;
  /** One line per file left out and why (`not attached: <uri>: <reason>`), for the person. */
  notAttached: string[];
}

/** The message for `blocks`. Never throws: a file that cannot be read is said so in its place. */
export async function promptMessage(
  blocks: readonly ContentBlock[],
  files: PromptFiles,
): Promise<PromptMessage> {
  const text: string[] = [];
  const parts: string[] = [];
  const notAttached: string[] = [];
  const mask = files.mask ?? ((content: string) => content);
  let refuse: Promise<ReadRefusal> | undefined;
  const refusal = async (path: string) => {
    refuse ??= files.refusal();
    try {
      return refusedPath(path, files.workspace, await refuse);
    } catch (error) {
      return `tern cannot tell whether its tools may read it: ${messageOf(error)}`;
    }
  };
  for (const block of blocks) {
    if (block.type === "text") {
      text.push(block.text);
      continue;
    }
    if (block.type !== "resource" && block.type !== "resource_link") {
      text.push(`[An ${block.type} attachment was left out: tern takes text only]`);
      continue;
    }
    const uri = block.type === "resource" ? block.resource.uri : block.uri;
    const named = filePath(uri);
    const path = typeof named === "string" ? named : undefined;
    // Text the editor embeds under another scheme (an untitled buffer) is the person's own.
    const refused = typeof named === "object"
      ? named.refused
      : path === undefined
      ? undefined
      : await refusal(path);
    if (refused !== undefined) {
      notAttached.push(`not attached: ${uri}: ${refused}`);
      parts.push(`[Not attached: ${uri}: ${refused}]`);
    } else if (block.type === "resource_link") {
      parts.push(await linked(uri, block.name, path, files.readBuffer, mask));
    } else if ("text" in block.resource) {
      parts.push(attached(uri, maskedCut(block.resource.text, mask)));
    } else {
      parts.push(`[Attached ${uri}: binary content, not included]`);
    }
  }
  return {
    text: [text.join("\n"), ...parts].filter((part) => part !== "").join("\n\n"),
    typed: text.join("\n"),
    notAttached,
  };
}

/**
 * Why the model may not have the text of `path` (absolute): the read guard's reason, decided
 * by the path as named and where it leads on disk (a file not saved yet: by its folder), or a
 * link in the workspace that leads out of it, as for `@` mentions. A file named outside the
 * workspace is the person's own pick in the editor: only the guard decides it.
 */
export function refusedPath(
  path: string,
  workspace: string,
  refuse: ReadRefusal,
): string | undefined {
  const real = realPathLoose(path);
  if (real === undefined) return "tern cannot tell where it leads";
  const refused = refuse(real, path);
  if (refused !== undefined) return refused;
  if (!isInside(workspace, real) && namedThrough(path, workspace)) {
    return `it leads to "${real}", out of the workspace`;
  }
  return undefined;
}

/**
 * Whether `path` is named through the workspace: one of its folders is the workspace or in it,
 * by where the folder leads on disk, not by its spelling. An editor may open the workspace by
 * another name (a link to it; macOS's `/tmp` is one), so a workspace's link that leads out
 * could otherwise pass as a file the person picked outside it.
 */
function namedThrough(path: string, workspace: string): boolean {
  for (let at = dirname(path); at !== dirname(at); at = dirname(at)) {
    if (isInside(workspace, at)) return true;
    const real = realPathLoose(at);
    if (real === undefined || isInside(workspace, real)) return true;
  }
  return isInside(workspace, path);
}

async function linked(
  uri: string,
  name: string,
  path: string | undefined,
  readBuffer: ReadBuffer | undefined,
  mask: (text: string) => string,
): Promise<string> {
  // Without the editor's reads the agent's own tools read the file from disk when it needs it.
  if (path === undefined || readBuffer === undefined) return `[The person points at ${uri}]`;
  try {
    return attached(uri, maskedCut(await readBuffer(path), mask));
  } catch (error) {
    return `[Cannot read ${name} (${uri}) from the editor: ${messageOf(error)}]`;
  }
}

function attached(uri: string, text: string): string {
  return `[Attached ${uri}, as open in the editor:]\n${text}`;
}

/**
 * Past the longest key a cut could part (a key format's run is masked to 65,536 characters):
 * what a long text is masked with beyond the part a message keeps.
 */
const BEYOND_CUT = 2 * 65536;

/**
 * A file's text as a message keeps it: at most {@linkcode ATTACHED_FILE_CHARS}, masked, the cut
 * said. Only the kept part (and what follows it, up to {@linkcode BEYOND_CUT}) is masked:
 * masking megabytes a hostile editor sends held tern for seconds. A key the cut parts is masked
 * whole in the longer text and not in the shorter, so what is kept is only where both agree:
 * never the start of a key the cut leaves unmasked.
 */
export function maskedCut(text: string, mask: (text: string) => string): string {
  if (text.length <= ATTACHED_FILE_CHARS) return mask(text);
  const note = `\n… (${text.length - ATTACHED_FILE_CHARS} more characters not included)`;
  const cut = mask(text.slice(0, ATTACHED_FILE_CHARS));
  const whole = mask(text.slice(0, ATTACHED_FILE_CHARS + BEYOND_CUT));
  let agree = 0;
  const most = Math.min(cut.length, whole.length);
  while (agree < most && cut.charCodeAt(agree) === whole.charCodeAt(agree)) agree++;
  return `${cut.slice(0, agree)}${note}`;
}

/**
 * The absolute path a `file:` URI (any case: a scheme is case-insensitive) or an absolute path
 * names; undefined for other URIs. A `file:` URI that names no path is refused.
 */
function filePath(uri: string): string | undefined | Refused {
  if (uri.startsWith("/")) return resolve(uri);
  if (!/^file:/i.test(uri)) return undefined;
  try {
    return resolve(fileURLToPath(new URL(uri)));
  } catch (error) {
    return { refused: `it is not a file URI tern can read (${messageOf(error)})` };
  }
}

interface Refused {
  refused: string;
}

/**
 * The real path of `path`, or of its nearest existing folder with the rest appended (a file not
 * saved yet); undefined when a part that exists cannot be resolved (a dangling or looping link).
 */
function realPathLoose(path: string): string | undefined {
  const rest: string[] = [];
  for (let at = path;; at = dirname(at)) {
    try {
      return resolve(Deno.realPathSync(at), ...rest);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound) || dirname(at) === at || exists(at)) {
        return undefined;
      }
      rest.unshift(basename(at));
    }
  }
}

/** Whether there is (or may be) an entry at `path`, a link that leads nowhere included. */
function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch (error) {
    return !(error instanceof Deno.errors.NotFound);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
