/**
 * The operations of a restore and the process that carries them out (`restore_main.ts`), with
 * read and write access to the workspace only.
 */
import { entryArgv } from "../../core/packaging.ts";
import { denoDirEnv } from "../../core/deno_dir_env.ts";

/** One change to the workspace, by a path relative to it. */
export type RestoreOp =
  | { op: "remove"; path: string }
  | { op: "link"; path: string; target: string }
  | { op: "write"; path: string; data: string; executable: boolean };

/** What the restore process reads on stdin. */
export interface RestoreRequest {
  /** Absolute real path. */
  workspace: string;
  ops: RestoreOp[];
}

/** The line it prints: how many operations were done, and what stopped the rest. */
export interface RestoreAnswer {
  done: number;
  error?: string;
}

/**
 * Runs `ops` in the restore process. Never throws for a failed operation: the answer says.
 * @throws {Error} when the process cannot start or answers nonsense.
 */
export async function runRestore(workspace: string, ops: RestoreOp[]): Promise<RestoreAnswer> {
  if (ops.length === 0) return { done: 0 };
  const [command, ...args] = entryArgv("rewind-restore", [
    "--no-prompt",
    "--quiet",
    "--no-config",
    "--no-lock",
    "--no-remote",
    `--allow-read=${workspace}`,
    `--allow-write=${workspace}`,
  ], []);
  const child = new Deno.Command(command, {
    args,
    clearEnv: true,
    env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...denoDirEnv() },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const request: RestoreRequest = { workspace, ops };
  await writer.write(new TextEncoder().encode(JSON.stringify(request)));
  await writer.close();
  const { stdout, stderr } = await child.output();
  const line = new TextDecoder().decode(stdout).trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(line) as RestoreAnswer;
  } catch {
    const detail = new TextDecoder().decode(stderr).trim().split("\n")[0] || "no answer";
    throw new Error(`Cannot restore the files: the restore process failed: ${detail}`);
  }
}

/** Base64 of `bytes` (restore data travels as JSON). */
export function encodeBase64(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}

/** The bytes of base64 `text`. */
export function decodeBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
