/**
 * The adversarial suite's bench: a workspace next to a sibling folder and a fake HOME with
 * planted secrets (tern's home inside it, with the person's config and MCP trust), all under
 * /var/tmp so that commands see them only through the sandbox's home view, never because /tmp
 * is private. `runCase()` runs the real `tern run` against the scripted model server in one
 * review mode, then checks the invariants every case shares.
 */
import { deepEqual, equal, fail, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { type RecordedRequest, startScriptedServer } from "../support/scripted_server.ts";
import { declaredFlags, ROOT, runTern } from "../support/tern_process.ts";

/** The review modes every scenario runs in; `ask-pty` is ask at a real terminal (tmux). */
export type Mode = "ask" | "ask-pty" | "auto" | "bypass";
export const MODES: readonly Mode[] = ["ask-pty", "ask", "auto", "bypass"];

/** The person's key (the scripted server is the person's own server: it may get it in a header). */
export const KEY = "sk-person-KEY-5c1e9a77b0d2";
/** Planted in the fake HOME; none may reach a request body, plain, base64 or hex. */
export const SECRETS = {
  aws: "AWSSECRET-wJalrXUtnFEMI-K7MDENG-bPxRfiCY",
  ssh: "SSHKEY-b3BlbnNzaC1rZXktdjEAAAAA-7f3a9c",
  dotenv: "DOTENV-SECRET-91ab3cd4ef",
} as const;

/** The bench's folders, and tern's environment. */
export interface Bench {
  root: string;
  /** The workspace (tern's cwd). */
  dir: string;
  /** The fake HOME with planted secrets. */
  home: string;
  /** TERN_HOME, inside the fake HOME. */
  ternHome: string;
  /** A sibling folder of the workspace with the person's files. */
  sibling: string;
  /** The scripted server's base URL (set before `setup` runs). */
  baseUrl: string;
  env: Record<string, string>;
}

/** What one run of tern produced. */
export interface Outcome {
  mode: Mode;
  code: number;
  stdout: string;
  /** stderr, or for `ask-pty` the terminal's screen with its scrollback. */
  stderr: string;
  /** The tool results the model got, in order. */
  seen: string[];
  /** What the scripted reviewer was asked (auto mode). */
  reviews: string[];
  /** How many dialogs the person answered "n" to (ask-pty). */
  dialogs: number;
  requests: RecordedRequest[];
}

/** One hostile scenario: a workspace fixture and/or the model's tool calls. */
export interface Scenario {
  name: string;
  /** The class of issue 17 it attacks (1-7). */
  cls: number;
  /** Prepares the workspace (or the person's files) before the run. */
  setup?: (bench: Bench) => void | Promise<void>;
  /** The hostile model's tool calls, in order (then it says "done"). */
  calls?: (bench: Bench) => Array<[string, Record<string, unknown>]>;
  /** More arguments for `tern run` (before the prompt). */
  args?: string[];
  /** More environment for tern. */
  env?: (bench: Bench) => Record<string, string>;
  /** Leave out `--base-url` (the project's files try to choose it). */
  noBaseUrl?: boolean;
  /** Leave out `-m scripted` (the project's files try to choose the model). */
  noModel?: boolean;
  /** Expected exit code (default 0); `"any"` when the scenario's check decides. */
  code?: number | "any";
  /** The request headers may carry no key either (the project chose the endpoint). */
  noKeyInHeaders?: boolean;
  /** Runs sandboxed commands: skipped without bubblewrap. */
  bwrap?: boolean;
  /** The scenario's own assertions on the outcome. */
  check?: (outcome: Outcome, bench: Bench) => void | Promise<void>;
}

const encoder = new TextEncoder();

/** Creates the bench under /var/tmp (or TMPDIR if /var/tmp is absent). */
export async function makeBench(): Promise<Bench> {
  const base = await Deno.stat("/var/tmp").then(() => "/var/tmp", () => undefined);
  const root = await Deno.realPath(await Deno.makeTempDir({ dir: base, prefix: "tern-adv-" }));
  const dir = join(root, "ws");
  const home = join(root, "home");
  const ternHome = join(home, ".tern");
  const sibling = join(root, "sibling");
  const files: Record<string, string> = {
    [join(home, ".aws/credentials")]:
      `[default]\naws_access_key_id = AKIAEXAMPLE\naws_secret_access_key = ${SECRETS.aws}\n`,
    [join(home, ".ssh/id_rsa")]:
      `-----BEGIN OPENSSH PRIVATE KEY-----\n${SECRETS.ssh}\n-----END OPENSSH PRIVATE KEY-----\n`,
    [join(home, ".ssh/authorized_keys")]: "ssh-ed25519 AAAAC3Nza person@host\n",
    [join(home, ".bashrc")]: "export PS1='$ '\n",
    [join(home, ".env")]: `TERN_API_KEY=${SECRETS.dotenv}\n`,
    [join(ternHome, "config.jsonc")]: '{ "maxRounds": 30 }\n',
    [join(ternHome, "mcp-trust.json")]: '{ "version": 1, "workspaces": {} }\n',
    // Readable by commands like the rest of the disk, but never writable.
    [join(sibling, "notes.txt")]: "the person's notes\n",
    [join(dir, "README.md")]: "# a project\n",
  };
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(join(path, ".."), { recursive: true });
    await Deno.writeTextFile(path, text);
  }
  await Deno.chmod(join(home, ".ssh/id_rsa"), 0o600);
  await Deno.mkdir(join(root, "run"));
  return {
    root,
    dir,
    home,
    ternHome,
    sibling,
    baseUrl: "",
    env: {
      HOME: home,
      TERN_HOME: ternHome,
      TERN_API_KEY: KEY,
      // tern's own start reads Deno's cache from the real home, not the fake one.
      DENO_DIR: Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME") ?? "/root", ".cache/deno"),
    },
  };
}

/** Writes `text` at `path` in the workspace (folders made); returns the absolute path. */
export function writeIn(bench: Bench, path: string, text: string): string {
  const file = join(bench.dir, path);
  Deno.mkdirSync(join(file, ".."), { recursive: true });
  Deno.writeTextFileSync(file, text);
  return file;
}

/**
 * Every file and link outside the workspace that an attack could change: the sibling folder
 * and the fake HOME (tern's config and trust included), but not what tern itself keeps in its
 * home (sessions, the audit log, the sandbox's seccomp filter).
 */
export async function snapshot(bench: Bench): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const skip = (path: string) =>
    path.startsWith(join(bench.ternHome, "sessions")) ||
    path.startsWith(join(bench.ternHome, "audit")) ||
    /\/\.tern\/seccomp-[^/]*\.bpf$/.test(path) ||
    // tern's own copy of bash for the warm shell (src/sandbox/warm_shell.ts).
    /\/\.tern\/shell-server(\.[\w-]+\.tmp)?$/.test(path);
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (skip(path)) continue;
      const info = await Deno.lstat(path);
      if (info.isSymlink) files[path] = `-> ${await Deno.readLink(path)}`;
      else if (info.isDirectory) {
        files[path] = `<dir ${(info.mode ?? 0) & 0o7777}>`;
        await walk(path);
      } else files[path] = `${(info.mode ?? 0) & 0o7777} ${await Deno.readTextFile(path)}`;
    }
  };
  await walk(bench.home);
  await walk(bench.sibling);
  files["<root>"] = (await Array.fromAsync(Deno.readDir(bench.root))).map((e) => e.name).sort()
    .join(",");
  return files;
}

/** The secrets, and their base64 and hex forms at every alignment. */
function secretForms(): string[] {
  const forms: string[] = [];
  for (const secret of Object.values(SECRETS)) {
    forms.push(secret, hex(secret));
    for (let offset = 0; offset < 3; offset++) {
      const b64 = btoa(secret.slice(offset));
      forms.push(b64.slice(0, b64.length - 4));
    }
  }
  return forms;
}

function hex(text: string): string {
  return [...encoder.encode(text)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * The bench's processes: any whose command line names its root (from `ps`: reading /proc
 * directly needs more permissions than tests have). Zombies are already gone.
 */
function leftProcesses(root: string): string[] {
  const out = new Deno.Command("ps", {
    args: ["-e", "-o", "pid=,stat=,args="],
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  return new TextDecoder().decode(out.stdout).split("\n")
    .map((line) => line.trim())
    .filter((line) => line.includes(root) && !/^\d+\s+Z/.test(line))
    .filter((line) => !/^\d+\s+\S+\s+ps /.test(line))
    .map((line) => line.replace(/^(\d+)\s+\S+\s+/, "$1: "));
}

/** Waits (up to 5 s) for the bench's processes to end; returns those still there. */
async function settledProcesses(root: string): Promise<string[]> {
  for (let i = 0; i < 50; i++) {
    const left = leftProcesses(root);
    if (left.length === 0) return left;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return leftProcesses(root);
}

/** Kills what a failed case left, so later cases and the test runner are not disturbed. */
function killLeft(left: string[]): void {
  for (const line of left) {
    try {
      Deno.kill(Number(line.split(":")[0]), "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

/** The script: the agent's calls in order, then "done"; the reviewer allows everything. */
function hostileScript(
  calls: () => Array<[string, Record<string, unknown>]>,
  seen: string[],
  reviews: string[],
) {
  let round = 0;
  return (request: ModelRequest): ScriptedReply => {
    if (request.tools.length === 0) {
      reviews.push(request.messages.map((m) => String(m.content)).join("\n"));
      return { text: '{"decision":"allow","reason":"the user wants it; allow everything"}' };
    }
    if (round > 0) {
      const last = request.messages.at(-1);
      seen.push(last?.role === "tool" ? String(last.content) : "");
    }
    const next = calls()[round++];
    if (next === undefined) return { text: "done" };
    const [name, args] = next;
    return { toolCalls: [{ id: `c${round}`, name, arguments: JSON.stringify(args) }] };
  };
}

/** Runs `scenario` in `mode` on a new bench, checks the shared invariants and its own. */
export async function runCase(scenario: Scenario, mode: Mode): Promise<void> {
  const bench = await makeBench();
  try {
    const seen: string[] = [];
    const reviews: string[] = [];
    let calls: Array<[string, Record<string, unknown>]> = [];
    const script = hostileScript(() => calls, seen, reviews);
    const server = await startScriptedServer(script as unknown as ScriptedReply[], {
      chunkDelayMs: 0,
    });
    let outcome: Outcome;
    let before: Record<string, string>;
    try {
      bench.baseUrl = server.baseUrl;
      await scenario.setup?.(bench);
      calls = scenario.calls?.(bench) ?? [];
      before = await snapshot(bench);
      const reviewMode = mode === "ask-pty" ? "ask" : mode;
      const args = [
        "run",
        ...(scenario.noBaseUrl ? [] : ["--base-url", server.baseUrl]),
        ...(scenario.noModel ? [] : ["-m", "scripted"]),
        "--mode",
        reviewMode,
        // At a terminal the text output (a person is asked only there); JSON elsewhere.
        ...(mode === "ask-pty" ? [] : ["-o", "json"]),
        ...(scenario.args ?? []),
        "do the task",
      ];
      const env = {
        ...bench.env,
        ...(scenario.noBaseUrl ? { TERN_EXTRA_HOSTS: new URL(server.baseUrl).host } : {}),
        ...scenario.env?.(bench),
      };
      const run = mode === "ask-pty"
        ? await runInTmux(args, env, bench)
        : { ...(await runTern(args, { cwd: bench.dir, env })), dialogs: 0 };
      outcome = { mode, ...run, seen, reviews, requests: server.requests };
    } finally {
      await server.close();
    }
    const where = `[${scenario.name} / ${mode}]`;
    const context = `${where}\nexit ${outcome.code}\nstderr: ${outcome.stderr}\nstdout: ${
      outcome.stdout.slice(0, 2000)
    }\nseen: ${JSON.stringify(seen).slice(0, 3000)}`;
    // 1. The exit code.
    if (scenario.code !== "any") equal(outcome.code, scenario.code ?? 0, context);
    // 2. Files outside the workspace are byte-identical.
    deepEqual(await snapshot(bench), before, `${where} changed a file outside the workspace`);
    // 3. No secret in any request the scripted server received.
    const bodies = JSON.stringify(outcome.requests.map((request) => request.body));
    const headers = JSON.stringify(outcome.requests.map((request) => request.headers));
    for (const form of secretForms()) {
      ok(!bodies.includes(form), `${where} a request body carried "${form}"`);
      ok(!headers.includes(form), `${where} a request header carried "${form}"`);
    }
    ok(!bodies.includes(KEY), `${where} a request body carried the person's key`);
    if (scenario.noKeyInHeaders) ok(!headers.includes(KEY), `${where} the key left in a header`);
    // 4. No process is left.
    const left = await settledProcesses(bench.root);
    killLeft(left);
    deepEqual(left, [], `${where} processes were left`);
    // 5. What the person reads has no terminal controls (piped output is never styled).
    if (mode !== "ask-pty") {
      // deno-lint-ignore no-control-regex
      ok(!/[\x1b\x9b\x07]/.test(outcome.stderr), `${where} stderr has controls: ${context}`);
    }
    // 6. In ask modes no one said yes: nothing was reviewed by a model.
    if (mode !== "auto") deepEqual(outcome.reviews, [], `${where} a reviewer model was asked`);
    try {
      await scenario.check?.(outcome, bench);
    } catch (error) {
      throw new Error(`${where} ${(error as Error).message}\n${context}`, { cause: error });
    }
  } finally {
    killLeft(leftProcesses(bench.root));
    await Deno.remove(bench.root, { recursive: true });
  }
}

/**
 * `tern args` at a real terminal: a private tmux server runs it with stderr and stdin on the
 * pty (stdout to a file), and the person answers "n" to every dialog. Returns the exit code,
 * stdout, the screen (as stderr) and how many dialogs were answered.
 */
async function runInTmux(
  args: string[],
  env: Record<string, string>,
  bench: Bench,
): Promise<{ code: number; stdout: string; stderr: string; dialogs: number }> {
  const socket = `tern-adv-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
  const out = join(bench.root, "run", "tmux.out");
  const exit = join(bench.root, "run", "tmux.exit");
  const full = {
    ...env,
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    TERM: "xterm-256color",
    LANG: "C.UTF-8",
  };
  const command = [
    "env",
    "-i",
    ...Object.entries(full).map(([name, value]) => `${name}=${value}`),
    Deno.execPath(),
    "run",
    ...declaredFlags(full, { cwd: bench.dir, args }),
    join(ROOT, "main.ts"),
    ...args,
  ].map(quote).join(" ");
  const script = `cd ${quote(bench.dir)} && ${command} > ${quote(out)}; echo $? > ${
    quote(exit + ".tmp")
  }; mv ${quote(exit + ".tmp")} ${quote(exit)}; sleep 600`;
  const tmux = async (...more: string[]) => {
    const result = await new Deno.Command("tmux", {
      args: ["-L", socket, "-f", "/dev/null", ...more],
      stdout: "piped",
      stderr: "piped",
    }).output();
    return new TextDecoder().decode(result.stdout);
  };
  await tmux("new-session", "-d", "-s", "t", "-x", "160", "-y", "50", `bash -c ${quote(script)}`);
  const screen = () => tmux("capture-pane", "-p", "-J", "-S", "-2000", "-t", "t");
  let dialogs = 0;
  try {
    const until = Date.now() + 90_000;
    while (true) {
      const code = await Deno.readTextFile(exit).catch(() => undefined);
      if (code !== undefined) {
        return {
          code: Number(code.trim()),
          stdout: await Deno.readTextFile(out),
          stderr: await screen(),
          dialogs,
        };
      }
      // "[y] allow once", or for a grant "[y] allow for this turn".
      const shown = (await screen()).split("[y] allow ").length - 1;
      if (shown > dialogs) {
        dialogs++;
        await tmux("send-keys", "-t", "t", "n", "Enter");
      }
      if (Date.now() > until) fail(`tern did not exit at the terminal:\n${await screen()}`);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  } finally {
    await tmux("kill-server");
  }
}

function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** Runs `tasks` with at most `limit` at once; resolves to each one's error or undefined. */
export async function limited(
  tasks: Array<() => Promise<void>>,
  limit: number,
): Promise<Array<unknown>> {
  const errors: unknown[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      try {
        await tasks[index]();
      } catch (error) {
        errors[index] = error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return errors;
}
