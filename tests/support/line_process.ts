/**
 * The real `tern <command>` as a long-lived child process speaking JSON lines: every stdout
 * line is collected (and must be JSON), lines are written to its stdin, and a test waits for
 * the line it needs, never for a fixed time.
 */
import { join } from "node:path";
import { declaredFlags, ROOT } from "./tern_process.ts";

export interface LineProcess {
  /** Every stdout line so far, parsed. */
  readonly lines: Record<string, unknown>[];
  /** Stdout lines that were not JSON objects (a test asserts there are none). */
  readonly invalid: string[];
  /** Writes `value` as one JSON line (or `raw` text as it is) to stdin. */
  send(value: unknown): Promise<void>;
  sendRaw(text: string): Promise<void>;
  /** The first line (from `after` on) that `match` accepts; rejects if stdout ends first. */
  waitFor(
    match: (line: Record<string, unknown>) => boolean,
    after?: number,
  ): Promise<Record<string, unknown>>;
  /** Closes stdin and waits for the exit; returns the code and stderr. */
  finish(): Promise<{ code: number; stderr: string }>;
  /** Kills the process (when a test failed) and waits for it. */
  kill(): Promise<void>;
  /** Sends `signal` to the process. */
  signal(signal: Deno.Signal): void;
  /** Stops reading stdout (a client that stalls): the pipe fills. */
  pauseReading(): void;
  /** Reads stdout again. */
  resumeReading(): void;
}

/** Spawns `tern args` in `cwd` with `env` (nothing inherited but PATH). */
export function spawnLineProcess(
  args: string[],
  options: { cwd: string; env: Record<string, string> },
): LineProcess {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...declaredFlags(options.env, { cwd: options.cwd, args }),
      join(ROOT, "main.ts"),
      ...args,
    ],
    cwd: options.cwd,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...options.env },
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: Record<string, unknown>[] = [];
  const invalid: string[] = [];
  let waiters: Array<() => void> = [];
  let ended = false;
  const wake = () => {
    const current = waiters;
    waiters = [];
    for (const waiter of current) waiter();
  };
  const stderr = new Response(child.stderr).text();
  let paused: PromiseWithResolvers<void> | undefined;
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of child.stdout) {
      await paused?.promise;
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n")) >= 0) {
        const text = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        try {
          const value = JSON.parse(text);
          if (typeof value !== "object" || value === null) throw new TypeError("not an object");
          lines.push(value);
        } catch {
          invalid.push(text);
        }
      }
      wake();
    }
    if (buffer !== "") invalid.push(buffer);
    ended = true;
    wake();
  })();
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  return {
    lines,
    invalid,
    sendRaw: (text) => writer.write(encoder.encode(text)),
    send: (value) => writer.write(encoder.encode(JSON.stringify(value) + "\n")),
    async waitFor(match, after = 0) {
      for (;;) {
        const found = lines.slice(after).find(match);
        if (found) return found;
        if (ended) {
          throw new Error(
            `stdout ended before the line looked for; stderr:\n${await stderr}\nstdout:\n${
              lines.map((line) => JSON.stringify(line)).join("\n")
            }`,
          );
        }
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    async finish() {
      await writer.close().catch(() => {});
      const status = await child.status;
      await reading;
      return { code: status.code, stderr: await stderr };
    },
    signal: (signal) => child.kill(signal),
    pauseReading: () => {
      paused ??= Promise.withResolvers<void>();
    },
    resumeReading: () => {
      paused?.resolve();
      paused = undefined;
    },
    async kill() {
      paused?.resolve();
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
      await writer.close().catch(() => {});
      await child.status;
      await reading;
      await stderr;
    },
  };
}
