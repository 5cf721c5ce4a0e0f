/**
 * Drives the real `tern` in a pseudo-terminal: a private tmux server (its own `-L` socket, no
 * config file) runs tern in one pane; tests type with `send-keys` and read the screen with
 * `capture-pane`. The pane keeps a plain shell after tern exits, so a test can check that the
 * terminal was given back in a usable state. `close()` kills the server and waits for the
 * pane's processes to end.
 */
import { join } from "node:path";
import { declaredFlags, ROOT } from "./tern_process.ts";

/** Options of `startTernInTmux`. */
export interface TmuxTernOptions {
  /** The workspace tern runs in. */
  cwd: string;
  /** TERN_HOME, and HOME too unless `env` sets it. */
  home: string;
  /** The scripted server's base URL. */
  baseUrl: string;
  /** Arguments after `main.ts`. Default none (the interactive session). */
  args?: string[];
  /** More environment variables for tern (they win over the defaults). */
  env?: Record<string, string>;
  /** A shell command run in the pane before tern starts (its output stays above tern's). */
  before?: string;
  /** Pane size in cells. Default 100 × 30. */
  columns?: number;
  rows?: number;
}

/** Options of `TmuxTern.waitFor`. */
export interface WaitOptions {
  /** Default 20 s: the machine may be loaded, and the first start compiles TypeScript. */
  timeoutMs?: number;
  /** Include the scrollback (the last 500 lines) in the capture. */
  scrollback?: boolean;
}

let started = 0;

/** Shell-quotes `text` for a POSIX shell. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** Starts tern in a new tmux server; call `close()` when done, whatever happens. */
export async function startTernInTmux(options: TmuxTernOptions): Promise<TmuxTern> {
  const socket = `tern-e2e-${Deno.pid}-${++started}-${crypto.randomUUID().slice(0, 8)}`;
  const env: Record<string, string> = {
    TERN_HOME: options.home,
    TERN_BASE_URL: options.baseUrl,
    TERN_MODEL: "scripted-model",
    TERN_API_KEY: "x",
    HOME: options.home,
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    TERM: "xterm-256color",
    LANG: "C.UTF-8",
    ...denoDir(),
    ...options.env,
  };
  const tern = [
    "env",
    "-i",
    ...Object.entries(env).map(([name, value]) => `${name}=${value}`),
    Deno.execPath(),
    "run",
    ...declaredFlags(env, { cwd: options.cwd, args: options.args }),
    join(ROOT, "main.ts"),
    ...(options.args ?? []),
  ].map(shellQuote).join(" ");
  // After tern: its exit code, then a bare shell, to show the terminal still works.
  const before = options.before === undefined ? "" : `${options.before}; `;
  const script = `${before}cd ${shellQuote(options.cwd)} && ${tern}; echo TERN_EXIT=$?; ` +
    `PS1='shell$ ' exec bash --norc --noprofile`;
  const session = new TmuxTern(socket, "tern");
  try {
    // Options first (history-limit only applies to panes created later). scroll-on-clear off:
    // tmux otherwise copies the screen into the scrollback when a clear-below starts at the
    // top row, which the inline renderer does whenever its live region sits there.
    await session.tmux(
      "-f",
      "/dev/null",
      ...["set-option", "-g", "exit-empty", "off", ";"],
      ...["set-option", "-g", "history-limit", "5000", ";"],
      ...["set-option", "-g", "scroll-on-clear", "off", ";"],
      ...["new-session", "-d", "-s", session.target],
      ...["-x", String(options.columns ?? 100), "-y", String(options.rows ?? 30)],
      `bash -c ${shellQuote(script)}`,
      // A size set with resize-window must stick with no client attached. (Set before the
      // first session, this option makes tmux 3.3a crash.)
      ...[";", "set-option", "-g", "window-size", "manual"],
    );
  } catch (error) {
    // With exit-empty off, a server whose session failed to start would stay behind.
    await session.close();
    throw error;
  }
  return session;
}

/** The test process's Deno cache, so tern's own start does not transpile everything again. */
function denoDir(): Record<string, string> {
  const dir = Deno.env.get("DENO_DIR") ??
    (Deno.env.get("HOME") ? join(Deno.env.get("HOME")!, ".cache", "deno") : undefined);
  return dir === undefined ? {} : { DENO_DIR: dir };
}

/** A tmux server running one session with tern in its only pane. */
export class TmuxTern {
  readonly socket: string;
  readonly target: string;

  constructor(socket: string, target: string) {
    this.socket = socket;
    this.target = target;
  }

  /** Runs `tmux -L <socket> …`; throws with tmux's message when it fails. */
  async tmux(...args: string[]): Promise<string> {
    const out = await new Deno.Command("tmux", {
      args: ["-L", this.socket, ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decoder = new TextDecoder();
    if (!out.success) {
      throw new Error(`Cannot run "tmux ${args.join(" ")}": ${decoder.decode(out.stderr).trim()}`);
    }
    return decoder.decode(out.stdout);
  }

  /**
   * The visible pane as plain text (one line per row, trailing blanks trimmed); `scrollback`
   * adds the last 500 lines of history, `history` all of it.
   */
  async screen(options: { scrollback?: boolean; history?: boolean } = {}): Promise<string> {
    const range = options.history ? ["-S", "-"] : options.scrollback ? ["-S", "-500"] : [];
    return await this.tmux("capture-pane", "-p", "-t", this.target, ...range);
  }

  /** Sends key names (`Enter`, `Escape`, `C-c`, `Up`, `y`…), as tmux understands them. */
  async keys(...names: string[]): Promise<void> {
    await this.tmux("send-keys", "-t", this.target, ...names);
  }

  /** Types `text` literally (no key-name lookup). */
  async type(text: string): Promise<void> {
    await this.tmux("send-keys", "-t", this.target, "-l", text);
  }

  /** Resizes the window (and so the pane and tern's terminal, which gets SIGWINCH). */
  async resize(columns: number, rows: number): Promise<void> {
    await this.tmux("resize-window", "-t", this.target, "-x", String(columns), "-y", String(rows));
  }

  /** The pane's size as tmux reports it. */
  async size(): Promise<{ columns: number; rows: number }> {
    const out = await this.tmux(
      "display-message",
      "-p",
      "-t",
      this.target,
      "#{pane_width} #{pane_height}",
    );
    const [columns, rows] = out.trim().split(" ").map(Number);
    return { columns, rows };
  }

  /**
   * Polls the screen until `predicate` holds and returns that capture; throws with `what` and
   * the last capture after the timeout.
   */
  async waitFor(
    predicate: (screen: string) => boolean,
    what: string,
    options: WaitOptions = {},
  ): Promise<string> {
    const deadline = Date.now() + (options.timeoutMs ?? 20_000);
    let last = "";
    for (;;) {
      last = await this.screen({ scrollback: options.scrollback });
      if (predicate(last)) return last;
      if (Date.now() > deadline) {
        throw new Error(`Timed out waiting for ${what}; the screen was:\n${last}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Waits until the screen (with scrollback) contains `text`. */
  waitForText(text: string, options: WaitOptions = {}): Promise<string> {
    return this.waitFor((screen) => screen.includes(text), JSON.stringify(text), {
      scrollback: true,
      ...options,
    });
  }

  /**
   * Kills the tmux server, removes its socket file and waits (up to 10 s) for the pane's
   * process tree to end, killing what is left. Never throws.
   */
  async close(): Promise<void> {
    let tree: number[] = [];
    let socketPath = "";
    try {
      socketPath = (await this.tmux("display-message", "-p", "#{socket_path}")).trim();
      const panes = await this.tmux("list-panes", "-a", "-F", "#{pane_pid}");
      const pids = panes.trim().split("\n").filter(Boolean).map(Number);
      tree = (await Promise.all(pids.map(descendants))).flat();
    } catch {
      // The server is gone already; kill-server below is then a no-op.
    }
    await this.tmux("kill-server").catch(() => {});
    if (socketPath !== "") await Deno.remove(socketPath).catch(() => {});
    const deadline = Date.now() + 10_000;
    const living = async () => {
      const live = new Set((await processes()).map((row) => row.pid));
      return tree.filter((pid) => live.has(pid));
    };
    let alive = await living();
    while (alive.length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      alive = await living();
    }
    for (const pid of alive) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // Gone in between.
      }
    }
  }
}

interface ProcessRow {
  pid: number;
  parent: number;
  /** `ps` state; "Z" for a zombie. */
  state: string;
  command: string;
}

/**
 * Every process on the machine, from `ps` (Deno needs --allow-all to read /proc directly).
 * Zombies are left out: they have ended and only wait to be reaped.
 */
async function processes(): Promise<ProcessRow[]> {
  const out = await new Deno.Command("ps", {
    args: ["-e", "-o", "pid=,ppid=,stat=,args="],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n").flatMap((line) => {
    const found = /^\s*(\d+)\s+(\d+)\s+(\S+)\s?(.*)$/.exec(line);
    if (!found || found[3].startsWith("Z")) return [];
    return [{
      pid: Number(found[1]),
      parent: Number(found[2]),
      state: found[3],
      command: found[4],
    }];
  });
}

/** `pid` and every live process below it. */
export async function descendants(pid: number): Promise<number[]> {
  const children = new Map<number, number[]>();
  for (const row of await processes()) {
    children.set(row.parent, [...(children.get(row.parent) ?? []), row.pid]);
  }
  const out: number[] = [];
  const stack = [pid];
  while (stack.length > 0) {
    const next = stack.pop()!;
    out.push(next);
    stack.push(...(children.get(next) ?? []));
  }
  return out;
}

/** Command lines of live processes (other than this one) that contain `needle`. */
export async function processesMatching(needle: string): Promise<string[]> {
  return (await processes())
    .filter((row) => row.pid !== Deno.pid && row.command.includes(needle))
    .map((row) => row.command);
}
