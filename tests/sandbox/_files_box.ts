/**
 * Fixture for the adversarial file-tool tests: a temp root holding the workspace `ws`, a
 * sibling `ws-evil` (same name prefix) and an `outside` folder with sentinel files, plus a
 * snapshot of everything but the workspace, compared when the test ends.
 */
import { deepEqual, ok } from "node:assert/strict";
import { createHash } from "node:crypto";
import { join, relative } from "node:path";
import type { Observation, ToolErrorCode } from "../../src/core/observation.ts";
import { type BuiltinToolOptions, createBuiltinTools } from "../../src/tools/builtin.ts";
import type { Tool } from "../../src/tools/define.ts";

/** Content of the sentinel file outside the workspace. */
export const SECRET = "top secret\n";

/** The temp folders of one test, and the built-in tools working in `ws`. */
export interface FilesBox {
  root: string;
  ws: string;
  /** A sibling whose name starts with the workspace's: `…/ws-evil`. */
  evil: string;
  outside: string;
  /** Runs built-in tool `name` in `ws` (or in `workspace`). */
  run(name: string, args: unknown, workspace?: string): Promise<Observation>;
}

/** Options for {@linkcode withFilesBox}. */
export interface FilesBoxOptions {
  tools?: BuiltinToolOptions;
  /**
   * Compare folder modification times too (default true). A race test turns it off: a
   * temporary file created and removed again in another folder is not a write there.
   */
  folderTimes?: boolean;
}

/**
 * Runs `fn` with a fresh box, then fails unless everything outside `ws` is exactly as before
 * (same entries, contents, modification times), and removes the box.
 */
export async function withFilesBox(
  fn: (box: FilesBox) => Promise<void>,
  options: FilesBoxOptions = {},
): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern_files_adv_" }));
  const tools = new Map(createBuiltinTools(options.tools).map((tool) => [tool.name, tool]));
  const box: FilesBox = {
    root,
    ws: join(root, "ws"),
    evil: join(root, "ws-evil"),
    outside: join(root, "outside"),
    run: (name, args, workspace = box.ws) => runTool(tools, name, args, workspace),
  };
  try {
    await Deno.mkdir(box.ws);
    await Deno.mkdir(box.evil);
    await Deno.mkdir(join(box.outside, "dir"), { recursive: true });
    await Deno.writeTextFile(join(box.outside, "secret.txt"), SECRET);
    await Deno.writeTextFile(join(box.outside, "dir/nested.txt"), SECRET);
    await Deno.writeTextFile(join(box.evil, "sentinel.txt"), SECRET);
    const times = options.folderTimes ?? true;
    const before = await snapshot(root, box.ws, times);
    await fn(box);
    deepEqual(
      await snapshot(root, box.ws, times),
      before,
      "something outside the workspace changed",
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

function runTool(
  tools: Map<string, Tool>,
  name: string,
  args: unknown,
  workspace: string,
): Promise<Observation> {
  const tool = tools.get(name);
  if (tool === undefined) throw new Error(`No tool "${name}"`);
  return tool.run(args, { workspace, signal: new AbortController().signal });
}

/** Every entry below `root` except `skip`: kind, content hash, mode, modification time. */
async function snapshot(root: string, skip: string, times: boolean): Promise<string[]> {
  const lines: string[] = [];
  const visit = async (dir: string): Promise<void> => {
    const info = await Deno.lstat(dir);
    lines.push(`${relative(root, dir) || "."}/ ${times ? info.mtime?.getTime() : ""}`);
    const names: string[] = [];
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
    for (const name of names.sort()) {
      const path = join(dir, name);
      if (path === skip) continue;
      const entry = await Deno.lstat(path);
      const rel = relative(root, path);
      if (entry.isDirectory) await visit(path);
      else if (entry.isSymlink) lines.push(`${rel} -> ${await Deno.readLink(path)}`);
      else {
        const hash = createHash("sha256").update(await Deno.readFile(path)).digest("hex");
        lines.push(`${rel} ${hash} ${entry.mode} ${entry.mtime?.getTime()}`);
      }
    }
  };
  await visit(root);
  return lines;
}

/** Writes `files` (path → content) below `dir`, creating folders. */
export async function plant(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    await Deno.mkdir(join(full, ".."), { recursive: true });
    await Deno.writeTextFile(full, content);
  }
}

/** The message of an ERROR observation with `code` that matches `pattern`; fails otherwise. */
export function denied(obs: Observation, code: ToolErrorCode, pattern: RegExp): string {
  ok(obs.status === "ERROR" && obs.code === code, `expected ${code}, got ${JSON.stringify(obs)}`);
  ok(pattern.test(obs.message), `message ${JSON.stringify(obs.message)} !~ ${pattern}`);
  ok(!obs.message.includes(SECRET.trim()), "the message leaks outside content");
  return obs.message;
}

/** The output of a SUCCEEDED observation; fails the test otherwise. */
export function output(obs: Observation): string {
  ok(obs.status === "SUCCEEDED", `expected SUCCEEDED, got ${JSON.stringify(obs)}`);
  return obs.output;
}

/** Makes a FIFO at `path` with mkfifo(1). */
export async function mkfifo(path: string): Promise<void> {
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  ok(made.success, "mkfifo failed");
}
