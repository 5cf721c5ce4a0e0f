/**
 * An ACP prompt (content blocks) as the one message tern's turn takes. Text is kept as it is;
 * a file the editor embeds (`resource`, its buffer as the editor holds it, saved or not) and a
 * file it links (`resource_link`) read through the editor's `fs/read_text_file` when it offers
 * that, so the model sees the unsaved buffer, come after it as marked context.
 */
import type { ContentBlock } from "@agentclientprotocol/sdk";
import { fileURLToPath } from "node:url";

/** Largest file text added to a message, in characters; the rest is cut and said so. */
export const ATTACHED_FILE_CHARS = 200_000;

/** Reads a file as the editor holds it; absent when the editor offers no `fs` reads. */
export type ReadBuffer = (path: string) => Promise<string>;

/** The message for `blocks`. Never throws: a file that cannot be read is said so in its place. */
export async function promptMessage(
  blocks: readonly ContentBlock[],
  readBuffer: ReadBuffer | undefined,
): Promise<string> {
  const text: string[] = [];
  const files: string[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        text.push(block.text);
        break;
      case "resource": {
        const resource = block.resource;
        if ("text" in resource) files.push(attached(resource.uri, resource.text));
        else files.push(`[Attached ${resource.uri}: binary content, not included]`);
        break;
      }
      case "resource_link":
        files.push(await linked(block.uri, block.name, readBuffer));
        break;
      default:
        text.push(`[An ${block.type} attachment was left out: tern takes text only]`);
    }
  }
  return [text.join("\n"), ...files].filter((part) => part !== "").join("\n\n");
}

async function linked(
  uri: string,
  name: string,
  readBuffer: ReadBuffer | undefined,
): Promise<string> {
  const path = filePath(uri);
  // Without the editor's reads the agent's own tools read the file from disk when it needs it.
  if (path === undefined || readBuffer === undefined) return `[The person points at ${uri}]`;
  try {
    return attached(uri, await readBuffer(path));
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return `[Cannot read ${name} (${uri}) from the editor: ${detail}]`;
  }
}

function attached(uri: string, text: string): string {
  const shown = text.length <= ATTACHED_FILE_CHARS
    ? text
    : `${text.slice(0, ATTACHED_FILE_CHARS)}\n… (${
      text.length - ATTACHED_FILE_CHARS
    } more characters not included)`;
  return `[Attached ${uri}, as open in the editor:]\n${shown}`;
}

function filePath(uri: string): string | undefined {
  if (uri.startsWith("/")) return uri;
  try {
    return uri.startsWith("file:") ? fileURLToPath(uri) : undefined;
  } catch {
    return undefined;
  }
}
