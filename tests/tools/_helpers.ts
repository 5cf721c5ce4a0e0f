/** Shared fixtures for the tool tests: real temp folders and small assertion helpers. */
import { ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import type { Observation, ToolErrorCode } from "../../src/core/observation.ts";
import type { Tool, ToolContext } from "../../src/tools/define.ts";
import { webRequestArgv } from "../../src/tools/web_transport.ts";

/** A temp folder `root` holding the workspace `ws` and a sibling folder `outside`. */
export interface Sandbox {
  root: string;
  ws: string;
  outside: string;
}

/** Runs `fn` with a fresh sandbox (real paths) and removes it afterwards. */
export async function withSandbox(
  fn: (box: Sandbox) => Promise<void>,
  files: Record<string, string> = {},
): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern_tools_" }));
  const box = { root, ws: join(root, "ws"), outside: join(root, "outside") };
  try {
    await Deno.mkdir(box.ws);
    await Deno.mkdir(box.outside);
    await Deno.writeTextFile(join(box.outside, "secret.txt"), "top secret\n");
    await writeFiles(box.ws, files);
    await fn(box);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** Writes `files` (relative path → content) below `dir`, creating folders. */
export async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    await Deno.mkdir(dirname(full), { recursive: true });
    await Deno.writeTextFile(full, content);
  }
}

/** A tool context for workspace `ws`. */
export function context(ws: string, extra: Partial<ToolContext> = {}): ToolContext {
  return { workspace: ws, signal: new AbortController().signal, ...extra };
}

/** Runs `tool` in workspace `ws`. */
export function call(tool: Tool, ws: string, args: unknown): Promise<Observation> {
  return tool.run(args, context(ws));
}

/** The output of a SUCCEEDED observation; fails the test otherwise. */
export function succeeded(obs: Observation): string {
  ok(obs.status === "SUCCEEDED", `expected SUCCEEDED, got ${JSON.stringify(obs)}`);
  return obs.output;
}

/** The message of an ERROR observation with `code`; fails the test otherwise. */
export function failed(obs: Observation, code: ToolErrorCode): string {
  ok(obs.status === "ERROR" && obs.code === code, `expected ${code}, got ${JSON.stringify(obs)}`);
  return obs.message;
}

/**
 * Runs `script` the way the web tools' request process runs (its argv from `webRequestArgv`:
 * the network and nothing else, tern's own deno.json), in `cwd`, with `input` on stdin.
 */
export async function runAsRequestProcess(
  script: string,
  input: Uint8Array,
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const [deno, ...args] = webRequestArgv();
  args[args.length - 1] = script;
  const child = new Deno.Command(deno, {
    args,
    cwd,
    clearEnv: true,
    env: Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {},
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(input);
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  const decoder = new TextDecoder();
  return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}
