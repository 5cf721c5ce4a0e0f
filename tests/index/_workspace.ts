/** A temporary workspace of given files, and what an index file holds: shared by the index tests. */
import { join } from "node:path";
import { IndexStore } from "../../src/index/store.ts";

/** Runs `body` with a real workspace holding `files` and a home folder beside it, then removes both. */
export async function withWorkspace(
  files: Record<string, string | Uint8Array>,
  body: (workspace: string, home: string) => Promise<void>,
): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-indexws-" }));
  const workspace = join(root, "ws");
  await Deno.mkdir(workspace);
  for (const [path, content] of Object.entries(files)) await write(join(workspace, path), content);
  try {
    await body(workspace, join(root, "home"));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** Writes `content` to `path`, making its folders. */
export async function write(path: string, content: string | Uint8Array): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  if (typeof content === "string") await Deno.writeTextFile(path, content);
  else await Deno.writeFile(path, content);
}

/** The paths of the files the index at `file` holds, sorted. */
export function indexed(file: string): string[] {
  const { store } = IndexStore.open(file);
  try {
    return [...store.knownFiles().keys()].sort();
  } finally {
    store.close();
  }
}
