/**
 * Fixtures for the bubblewrap tests: a real temp box (workspace with git folders, a sibling
 * folder, a home with secrets, a private tmp), its shell plan, process and file-tree checks.
 */
import { deepEqual, ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import { bwrapNeed } from "../support/needs.ts";
import { gitDirsUnder, secretLocations } from "../../src/sandbox/protected_paths.ts";
import { shellEnv } from "../../src/sandbox/shell_runner.ts";
import { createBwrapRunner } from "../../src/sandbox/shell_runner.ts";
import type { ShellPlan, ShellResult, ShellRunOptions } from "../../src/sandbox/types.ts";
import type { PermissionRule, ResourceLimits } from "../../src/config/schema.ts";
import {
  createSandbox,
  type CreateSandboxOptions,
  type SandboxRuntime,
} from "../../src/sandbox/runtime.ts";
import { WarmSlot } from "../../src/sandbox/warm_shell.ts";
import { pathDenials } from "../../src/sandbox/denied_paths.ts";
import { BUILTIN_MANIFEST } from "../../src/tools/mod.ts";

/** Whether bubblewrap can run here; tests that need it are ignored (loudly) when it cannot. */
export const bwrap: { ok: boolean } = bwrapNeed;

/** `Deno.test`, ignored when bubblewrap cannot run here. */
export function bwrapTest(name: string, fn: (t: Deno.TestContext) => Promise<void>): void {
  Deno.test({ name, ignore: !bwrap.ok, fn });
}

/** A temp folder `root` with a workspace, a sibling, a home and a private tmp (real paths). */
export interface Box {
  root: string;
  ws: string;
  outside: string;
  home: string;
  tmp: string;
}

/** The files every box starts with, relative to `root`. */
const BOX_FILES: Record<string, string> = {
  "ws/README.md": "hello\n",
  "ws/.git/config": "[core]\n",
  "ws/.git/hooks/pre-commit": "#!/bin/sh\n",
  "ws/.git/HEAD": "ref: refs/heads/main\n",
  "ws/sub/.git/config": "[core]\n",
  "ws/sub/.git/hooks/post-checkout": "#!/bin/sh\n",
  "ws/wt/.git": "gitdir: ../.git/worktrees/wt\n",
  "outside/secret.txt": "top secret\n",
  "home/.ssh/id_rsa": "PRIVATE-KEY-CONTENT\n",
  "home/.netrc": "machine x login y password NETRC-PASSWORD\n",
  "home/.aws/credentials": "AWS-SECRET\n",
  "home/.bashrc": "# rc\n",
};

/**
 * Where boxes go: not below /tmp, where the sandbox's private /tmp would hide the sibling
 * folder and the home instead of the sandbox having to protect them.
 */
const BOX_PARENT = "/var/tmp";

/** Runs `fn` with a fresh box and removes it afterwards. */
export async function withBox(fn: (box: Box) => Promise<void>): Promise<void> {
  const dir = await Deno.stat(BOX_PARENT).then((info) => info.isDirectory, () => false)
    ? BOX_PARENT
    : undefined;
  const root = await Deno.realPath(await Deno.makeTempDir({ dir, prefix: "tern_bwrap_" }));
  const box = {
    root,
    ws: join(root, "ws"),
    outside: join(root, "outside"),
    home: join(root, "home"),
    tmp: join(root, "tmp"),
  };
  try {
    await Deno.mkdir(box.tmp);
    for (const [path, content] of Object.entries(BOX_FILES)) {
      await Deno.mkdir(dirname(join(root, path)), { recursive: true });
      await Deno.writeTextFile(join(root, path), content);
    }
    await fn(box);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/**
 * The `:workspace`-like plan for `box`: the workspace writable, its `.git` folders read-only,
 * the home's secrets hidden, env from `source` (default: a small fixed one with HOME in the box).
 */
export async function planFor(
  box: Box,
  extra: Partial<ShellPlan> & { source?: Record<string, string> } = {},
): Promise<ShellPlan> {
  const { source, ...rest } = extra;
  return {
    cwd: box.ws,
    writable: [box.ws],
    readOnly: await gitDirsUnder([box.ws]),
    hidden: secretLocations(box.home),
    network: false,
    env: shellEnv(source ?? { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: box.home }),
    ...rest,
  };
}

/** A number unlikely to be in any other command line: `sleep <marker>` finds ours. */
export function marker(): string {
  return `30.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
}

/** Command lines of live (non-zombie) processes containing `text`, from `ps`. */
export async function processesWith(text: string): Promise<string[]> {
  const ps = await new Deno.Command("ps", { args: ["-eo", "stat=,args="] }).output();
  ok(ps.success);
  return new TextDecoder().decode(ps.stdout).split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("Z") && line.includes(text))
    .map((line) => line.replace(/^\S+\s+/, ""));
}

/**
 * Fails when any process with `text` in its command line is still alive after a while: the
 * kernel kills a pid namespace's processes just after bubblewrap's exit, not before, and an
 * unsandboxed process's watchdog (a shell reading its liveness pipe) may run late on a loaded
 * machine. Polls for up to 5 s; a process that is gone ends the wait at once.
 */
export async function assertNoProcessWith(text: string): Promise<void> {
  let left = await processesWith(text);
  for (let tries = 0; left.length > 0 && tries < 100; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = await processesWith(text);
  }
  if (left.length === 0) return;
  // What each one is, and what holds it: enough to tell a missed kill from a stalled machine.
  const ps = await new Deno.Command("ps", {
    args: ["-eo", "pid=,ppid=,pgid=,sid=,stat=,etimes=,wchan:20=,args="],
  }).output();
  const table = new TextDecoder().decode(ps.stdout).split("\n")
    .filter((line) => line.includes(text) || line.includes("bwrap")).join("\n");
  const load = await Deno.readTextFile("/proc/loadavg").catch(() => "unknown");
  deepEqual(left, [], `processes with "${text}" were left (load ${load.trim()}):\n${table}`);
}

/** Every file and folder below `dir` (kind, size, mode, links, small files' content) but `skip`. */
export async function treeState(
  dir: string,
  skip: readonly string[] = [],
): Promise<Map<string, string>> {
  const state = new Map<string, string>();
  const visit = async (path: string) => {
    const info = await Deno.lstat(path);
    const kind = info.isDirectory
      ? "dir"
      : info.isSymlink
      ? "link"
      : info.isFile
      ? "file"
      : "special";
    const content = kind === "file" && info.size < 10_000 ? await Deno.readTextFile(path) : "";
    state.set(path, `${kind} ${info.size} ${info.mode} ${info.nlink} ${content}`);
    if (!info.isDirectory) return;
    const names: string[] = [];
    for await (const entry of Deno.readDir(path)) names.push(entry.name);
    for (const name of names.sort()) {
      if (!skip.includes(join(path, name))) await visit(join(path, name));
    }
  };
  await visit(dir);
  return state;
}

/** What must not change in `box` when a command runs: all but the writable roots, plus git. */
export async function protectedState(box: Box, plan: ShellPlan): Promise<Map<string, string>> {
  const state = await treeState(box.root, [box.ws, box.tmp]);
  for (const path of plan.readOnly) {
    for (const [key, value] of await treeState(path)) state.set(key, value);
  }
  return state;
}

/** What an adversarial test body gets. */
export interface Attack {
  box: Box;
  plan: ShellPlan;
  /** In every command line this test starts (`sleep <mark>` too), so leftovers show. */
  mark: string;
  /** Runs `command` through a bubblewrap runner for `plan`, in the workspace. */
  run(command: string, options?: Partial<ShellRunOptions>): Promise<ShellResult>;
}

/** Plan changes for one adversarial test, from its box (which it may add files to first). */
export type PlanTweak = (
  box: Box,
) => PlanChanges | Promise<PlanChanges>;

type PlanChanges = Partial<ShellPlan> & { source?: Record<string, string> };

/**
 * A bubblewrap test that also asserts, after `fn`, that nothing outside the writable roots
 * changed (the `.git` folders included) and that no process with the test's mark is left. Each
 * is run twice: with one-shot sandboxes, and with a warm shell (warm_shell.ts) that keeps one
 * sandbox for the test's commands.
 */
export function attackTest(name: string, fn: (attack: Attack) => Promise<void>, tweak?: PlanTweak) {
  for (const warm of [false, true]) {
    bwrapTest(warm ? `${name} (warm shell)` : name, async () => {
      await withBox(async (box) => {
        const plan = await planFor(box, await tweak?.(box));
        const before = await protectedState(box, plan);
        const mark = marker();
        const runner = createBwrapRunner(plan);
        // The warm shell's server file goes to box.tmp, which the state check skips.
        const slot = warm ? new WarmSlot(box.tmp) : null;
        const run = async (command: string, options: Partial<ShellRunOptions> = {}) => {
          const marked = `: ${mark}; ${command}`;
          const call = { cwd: box.ws, ...options };
          // A warm shell busy with another command sends this one to a one-shot sandbox.
          return await slot?.run(plan, marked, call) ?? await runner(marked, call);
        };
        try {
          await fn({ box, plan, mark, run });
        } finally {
          await slot?.close();
        }
        deepEqual(
          await protectedState(box, plan),
          before,
          "files outside the writable roots changed",
        );
        await assertNoProcessWith(mark);
      });
    });
  }
}

/** Whether `path` exists (without following a final symlink). */
export async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

/** Options for {@linkcode withTestSandbox}. */
export interface TestSandboxOptions {
  /** The temp folder's name prefix and the run id. */
  name: string;
  limits?: ResourceLimits;
  /** The worker's handler; default the real tools' (src/tools/worker_handler.ts). */
  handlerUrl?: URL;
  /** The person's permission rules. */
  rules?: readonly PermissionRule[];
  /** Files to write in the workspace before the sandbox opens, by relative path. */
  files?: Record<string, string>;
}

/**
 * Runs `fn` with a real `:workspace` sandbox over a fresh workspace in a temp folder (under
 * /var/tmp: the sandbox's private /tmp would hide a folder below /tmp), whose root stands in for
 * HOME; closes the sandbox and removes the folder afterwards.
 */
export async function withTestSandbox(
  options: TestSandboxOptions,
  fn: (sandbox: SandboxRuntime, ws: string) => Promise<void>,
): Promise<void> {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ dir: BOX_PARENT, prefix: `tern_${options.name}_` }),
  );
  const ws = join(root, "ws");
  await Deno.mkdir(ws);
  for (const [path, content] of Object.entries(options.files ?? {})) {
    await Deno.mkdir(dirname(join(ws, path)), { recursive: true });
    await Deno.writeTextFile(join(ws, path), content);
  }
  const sandbox = await createSandbox({
    workspace: ws,
    profile: ":workspace",
    noSandbox: false,
    ternHome: join(root, "tern-home"),
    env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: root },
    home: root,
    handlerUrl: options.handlerUrl ??
      new URL("../../src/tools/worker_handler.ts", import.meta.url),
    runId: `${options.name}-test`,
    ...(options.limits === undefined ? {} : { limits: options.limits }),
    ...(options.rules === undefined
      ? {}
      : { denials: await pathDenials(options.rules, BUILTIN_MANIFEST) }),
  });
  try {
    await fn(sandbox, ws);
  } finally {
    await sandbox.close();
    await Deno.remove(root, { recursive: true });
  }
}

/**
 * createSandbox()'s options for a test: workspace `ws` in `root` (also HOME), `:workspace` with
 * bubblewrap, tern's home at `root/tern-home`; `extra` overrides any of them.
 */
export function sandboxOptionsFor(
  root: string,
  ws: string,
  runId: string,
  extra: Partial<CreateSandboxOptions> = {},
): CreateSandboxOptions {
  return {
    workspace: ws,
    profile: ":workspace",
    noSandbox: false,
    ternHome: join(root, "tern-home"),
    env: { PATH: "/usr/bin:/bin", HOME: root },
    home: root,
    handlerUrl: new URL("../../src/tools/worker_handler.ts", import.meta.url),
    runId,
    ...extra,
  };
}

/** Kills (SIGKILL) every process whose command line holds `text`: what a failed test left. */
export async function killWith(text: string): Promise<void> {
  const ps = await new Deno.Command("ps", { args: ["-eo", "pid=,args="] }).output();
  for (const line of new TextDecoder().decode(ps.stdout).split("\n")) {
    const [pid, ...args] = line.trim().split(/\s+/);
    if (!args.join(" ").includes(text)) continue;
    try {
      Deno.kill(Number(pid), "SIGKILL");
    } catch {
      // Gone.
    }
  }
}
