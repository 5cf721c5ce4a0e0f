/**
 * The interactive program in a pseudo-terminal for the start-up benchmarks: util-linux `script`
 * runs the command in a 100×30 pty whose input and output are pipes to this process.
 */

/** The editor's placeholder: once it is on screen, the prompt is usable. */
export const PROMPT = "ask tern, or / for commands";

/** The environment the start benchmarks run tern with: a fresh home, a fixed model and key. */
export function benchEnv(home: string): Record<string, string> {
  return {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: home,
    TERN_HOME: home,
    TERM: "xterm-256color",
    TERN_MODEL: "bench",
    TERN_API_KEY: "x",
  };
}

const TIMEOUT_MS = 15_000;

/** The terminal's output as text, with a wait for a string or for quiet. */
export class Output {
  text = "";
  /** When each chunk arrived, with the text length after it. */
  chunks: Array<{ at: number; end: number }> = [];
  #waiters: Array<() => void> = [];
  readonly done: Promise<void>;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.done = (async () => {
      const decoder = new TextDecoder();
      for await (const bytes of stream) {
        this.text += decoder.decode(bytes, { stream: true });
        this.chunks.push({ at: performance.now(), end: this.text.length });
        for (const wake of this.#waiters.splice(0)) wake();
      }
      for (const wake of this.#waiters.splice(0)) wake();
    })();
  }

  /** When `needle` first appeared at or after text offset `from` (the chunk that completed it). */
  async seen(needle: string, from = 0): Promise<number> {
    const deadline = performance.now() + TIMEOUT_MS;
    for (;;) {
      const at = this.text.indexOf(needle, from);
      if (at >= 0) return this.chunks.find((c) => c.end >= at + needle.length)!.at;
      if (performance.now() > deadline) throw new Error(`No "${needle}" in the output`);
      await this.#next(deadline - performance.now());
    }
  }

  /** Resolves once no output came for `ms`. */
  async quiet(ms: number): Promise<void> {
    const deadline = performance.now() + TIMEOUT_MS;
    while (performance.now() < deadline) {
      const last = this.chunks.at(-1)?.at ?? 0;
      const left = last + ms - performance.now();
      if (left <= 0) return;
      await this.#next(left);
    }
    throw new Error("The output never went quiet");
  }

  #next(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, ms));
      this.#waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/**
 * Spawns `command` in a 100×30 pseudo-terminal; stdin and stdout are pipes to the terminal.
 * `start` is `performance.now()` just before the spawn.
 */
export function inTerminal(
  command: string[],
  options: { cwd: string; env: Record<string, string> },
) {
  const line = `stty cols 100 rows 30; exec ${command.map(shellQuote).join(" ")}`;
  const start = performance.now();
  const child = new Deno.Command("script", {
    args: ["-qfec", line, "/dev/null"],
    cwd: options.cwd,
    env: options.env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  return { start, child, output: new Output(child.stdout) };
}

/** Quotes `arg` for the shell line `script -c` runs. */
function shellQuote(arg: string): string {
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}
