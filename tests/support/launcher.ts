/** bin/tern run as a person's shell starts it: the launcher and all, with only the given env. */
import { join } from "node:path";
import { ROOT, type TernRun } from "./tern_process.ts";

export interface LauncherOptions {
  /** The whole environment (nothing is inherited). */
  env: Record<string, string>;
  cwd?: string;
  /** The launcher to start: bin/tern, or a link to it. */
  launcher?: string;
}

/** Runs `bin/tern args` (stdin empty) and returns its exit code and decoded output. */
export async function runLauncher(args: string[], options: LauncherOptions): Promise<TernRun> {
  const out = await new Deno.Command(options.launcher ?? join(ROOT, "bin", "tern"), {
    args,
    cwd: options.cwd,
    env: options.env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}
