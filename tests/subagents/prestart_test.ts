/**
 * The idle child a parent starts ahead (`subagentPrestart`): real `tern` parents (`tern run`, and
 * the line-mode UI fed through a pipe) and their `tern child`ren against a scripted server. The
 * processes are watched through /proc: which are children of the parent, which one is the idle
 * one (`TERN_CHILD_IDLE=1` in its environment), which session file each holds open.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { declaredFlags, ROOT, tempWorkspace } from "../support/tern_process.ts";
import { allText, call, firstUser, sessionsOf, until } from "./_helpers.ts";

type Script = (request: ModelRequest) => ScriptedReply;

/** `tern args` started as bin/tern starts it, stdin piped (the line-mode UI without a terminal). */
function startTern(args: string[], cwd: string, env: Record<string, string>): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...declaredFlags(env, { cwd, args }), join(ROOT, "main.ts"), ...args],
    cwd,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/**
 * Runs `script` in bash with `args` and returns its stdout: /proc of other processes is read
 * through it (Deno grants /proc/<pid> only with --allow-all).
 */
function bash(script: string, ...args: string[]): string {
  const out = new Deno.Command("bash", { args: ["-c", script, "bash", ...args] }).outputSync();
  return new TextDecoder().decode(out.stdout);
}

/** The `tern child` processes of `pid`: whether each was started idle, and runs Deno yet. */
function ternChildren(pid: number): Array<{ pid: number; idle: boolean; deno: boolean }> {
  const script = `
    for c in $(cat /proc/$1/task/*/children 2>/dev/null); do
      tr '\\0' '\\n' </proc/$c/cmdline 2>/dev/null | grep -qx child || continue
      idle=0; tr '\\0' '\\n' </proc/$c/environ 2>/dev/null | grep -qx TERN_CHILD_IDLE=1 && idle=1
      deno=0; tr '\\0' '\\n' </proc/$c/cmdline 2>/dev/null | grep -qx -- --no-prompt && deno=1
      echo "$c $idle $deno"
    done`;
  return bash(script, String(pid)).trim().split("\n").filter(Boolean).map((line) => {
    const [child, idle, deno] = line.split(" ");
    return { pid: Number(child), idle: idle === "1", deno: deno === "1" };
  });
}

/** The session files (.jsonl) `pid` holds open. */
function sessionFiles(pid: number): string[] {
  const out = bash(`readlink /proc/$1/fd/* 2>/dev/null | grep '[.]jsonl$'`, String(pid));
  return out.trim().split("\n").filter(Boolean);
}

/** Whether `pid` ended (gone, or a zombie nobody reaped yet). */
function ended(pid: number): boolean {
  const state = bash(`sed 's/.*) //' /proc/$1/stat 2>/dev/null | cut -c1`, String(pid)).trim();
  return state === "" || state === "Z";
}

/**
 * The spare idle child of `parent` (started idle, running Deno, holding no session file: not a
 * task's child), once there is one.
 */
async function spareIdleChild(parent: number, tasks: number[] = []): Promise<number> {
  let found: number | undefined;
  await until(() => {
    found = ternChildren(parent).find((child) =>
      child.idle && child.deno && !tasks.includes(child.pid) && !ended(child.pid) &&
      sessionFiles(child.pid).length === 0
    )?.pid;
    return found !== undefined;
  }, "the spare idle child");
  return found!;
}

/** A scripted server and a workspace for one parent; `stop()` ends both. */
async function setUp(script: Script, beforeReply: (request: ModelRequest) => Promise<void>) {
  const server = await startScriptedServer(script, { chunkDelayMs: 0, beforeReply });
  const ws = await tempWorkspace();
  const env = {
    TERN_HOME: ws.home,
    HOME: ws.home,
    TERN_API_KEY: "k",
    TERN_BASE_URL: server.baseUrl,
    TERN_MODEL: "scripted",
    NO_COLOR: "1",
  };
  return {
    server,
    ws,
    env,
    stop: async () => {
      await server.close();
      await ws.cleanup();
    },
  };
}

const encoder = new TextEncoder();
const isChild = (request: ModelRequest) => firstUser(request).startsWith("CHILD");
const isTool = (request: ModelRequest) => request.messages.some((m) => m.role === "tool");

Deno.test("spawn_agent() hands its task to the idle child its streamed name started, with the task's grants", async () => {
  let parentPid = 0;
  /** What the children started idle held open and had started, at the task's request. */
  const seen: { files: string[]; grandchildren: number[] } = { files: [], grandchildren: [] };
  const script: Script = (request) => {
    if (isChild(request)) {
      return isTool(request) ? { text: "child done" } : call("glob", { pattern: "*" }, "cg");
    }
    const text = allText(request);
    if (!text.includes("Started subagent")) {
      return call("spawn_agent", { task_name: "count", message: "CHILD count" }, "s1");
    }
    if (!text.includes("child done")) return call("wait_agent", {}, "w1");
    return { text: "parent done" };
  };
  const context = await setUp(script, (request) => {
    if (isChild(request) && !isTool(request)) {
      for (const child of ternChildren(parentPid).filter((c) => c.idle)) {
        seen.files.push(...sessionFiles(child.pid));
        // A child has no subagent tools: it starts no idle child of its own.
        seen.grandchildren.push(...ternChildren(child.pid).map((grandchild) => grandchild.pid));
      }
    }
    return Promise.resolve();
  });
  try {
    const parent = startTern(
      ["run", "--mode", "bypass", "--profile", ":read-only", "go"],
      context.ws.dir,
      context.env,
    );
    parentPid = parent.pid;
    await parent.stdin.close();
    const out = await parent.output();
    equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const sessions = await sessionsOf(context.ws.home);
    const children = sessions.filter((s) => s.header.subagentOf !== undefined);
    equal(children.length, 1);
    const [child] = children;
    // A process started idle ran the task: it held the child session open while asking its
    // model (a child the spawn started itself is not started idle).
    ok(seen.files.includes(child.info.path), `${seen.files} / ${child.info.path}`);
    deepEqual(seen.grandchildren, []);
    const user = child.entries.find((e) => e.type === "message" && e.message.role === "user");
    equal(user?.type === "message" && user.message.content, "CHILD count");
    // The task's grants: the parent's profile, AUTO review, no session grants.
    const profiles = child.entries.flatMap((e) => e.type === "profile" ? [e.profile] : []);
    deepEqual(profiles, [":read-only"]);
    const modes = child.entries.flatMap((e) => e.type === "mode" ? [e.mode] : []);
    deepEqual(modes, ["auto"]);
    equal(child.entries.filter((e) => e.type === "permission").length, 0);
  } finally {
    await context.stop();
  }
});

Deno.test("a run that never calls spawn_agent starts no idle child", async () => {
  let parentPid = 0;
  const atRequests: boolean[][] = [];
  const script: Script = (request) =>
    isTool(request) ? { text: "done" } : call("glob", { pattern: "*" }, "g1");
  const context = await setUp(script, () => {
    atRequests.push(ternChildren(parentPid).map((child) => child.idle));
    return Promise.resolve();
  });
  try {
    const parent = startTern(["run", "--mode", "bypass", "go"], context.ws.dir, context.env);
    parentPid = parent.pid;
    await parent.stdin.close();
    const out = await parent.output();
    equal(out.code, 0, new TextDecoder().decode(out.stderr));
    // Two requests (before and after the tool call): no child process at either.
    deepEqual(atRequests, [[], []]);
  } finally {
    await context.stop();
  }
});

Deno.test("an idle child started before /profile narrowed the grants runs with the narrower ones", async () => {
  let idlePid = 0;
  const seen: string[] = [];
  const script: Script = (request) => {
    if (isChild(request)) return { text: "child done" };
    const text = allText(request);
    // Each turn spawns one child and waits for it; the first leaves the next idle child ready.
    const turn = text.includes("second") ? "second" : "first";
    const spawned = text.split("Started subagent").length - 1;
    const done = text.split("child done").length - 1;
    const want = turn === "first" ? 1 : 2;
    if (spawned < want) {
      return call("spawn_agent", { task_name: turn, message: `CHILD ${turn}` }, `s${want}`);
    }
    if (done < want) return call("wait_agent", {}, `w${want}`);
    return { text: `${turn} answer` };
  };
  let parentPid = 0;
  /** The first task's child (it holds its session open at its request). */
  const tasks: number[] = [];
  const firstDone = Promise.withResolvers<void>();
  const context = await setUp(script, (request) => {
    if (isChild(request) && firstUser(request) === "CHILD first") {
      const holding = ternChildren(parentPid).filter((c) => sessionFiles(c.pid).length > 0);
      tasks.push(...holding.map((c) => c.pid));
    }
    if (isChild(request) && firstUser(request) === "CHILD second") {
      seen.push(...sessionFiles(idlePid));
    }
    const text = allText(request);
    if (!isChild(request) && !text.includes("second") && text.includes("child done")) {
      firstDone.resolve();
    }
    return Promise.resolve();
  });
  try {
    const parent = startTern([], context.ws.dir, context.env);
    parentPid = parent.pid;
    const stdin = parent.stdin.getWriter();
    await stdin.write(encoder.encode("first\n"));
    // Started while the session's profile was :workspace (the default), after the first
    // task's child began its run.
    await firstDone.promise;
    idlePid = await spareIdleChild(parent.pid, tasks);
    await stdin.write(encoder.encode("/profile :read-only\nsecond\n"));
    await stdin.close();
    const out = await parent.output();
    const stdout = new TextDecoder().decode(out.stdout);
    equal(out.code, 0, new TextDecoder().decode(out.stderr));
    ok(stdout.includes("second answer"), stdout);
    const sessions = await sessionsOf(context.ws.home);
    const child = sessions.find((s) =>
      s.entries.some((e) => e.type === "message" && e.message.content === "CHILD second")
    )!;
    ok(seen.includes(child.info.path), `${seen} / ${child.info.path}`);
    const profiles = child.entries.flatMap((e) => e.type === "profile" ? [e.profile] : []);
    deepEqual(profiles, [":read-only"]);
  } finally {
    await context.stop();
  }
});

for (const how of ["exit", "SIGHUP", "SIGKILL"] as const) {
  Deno.test(`the idle child ends with its parent (${how})`, async () => {
    // A spawn, whose child answers at once: the host then keeps the next idle child ready.
    const script: Script = (request) => {
      if (isChild(request)) return { text: "child done" };
      return isTool(request)
        ? { text: "an answer" }
        : call("spawn_agent", { task_name: "one", message: "CHILD one" }, "s1");
    };
    const context = await setUp(script, () => Promise.resolve());
    try {
      const parent = startTern([], context.ws.dir, context.env);
      const stdin = parent.stdin.getWriter();
      await stdin.write(encoder.encode("hello\n"));
      const idle = await spareIdleChild(parent.pid);
      if (how === "exit") {
        await stdin.close();
      } else {
        parent.kill(how);
        await stdin.close().catch(() => {});
      }
      const status = await parent.status;
      if (how === "exit") equal(status.code, 0);
      // SIGHUP: the UI may end on its own terms (it handles the signal); SIGKILL leaves it none.
      if (how === "SIGKILL") equal(status.signal, "SIGKILL");
      await parent.stdout.cancel().catch(() => {});
      await parent.stderr.cancel().catch(() => {});
      // No orphan: the child sees its stdin end and exits.
      await until(() => ended(idle), `the idle child ${idle} to end`);
    } finally {
      await context.stop();
    }
  });
}

Deno.test("no idle child with subagentPrestart off: the spawn starts its own", async () => {
  let parentPid = 0;
  const atChild: boolean[][] = [];
  const atEnd: boolean[][] = [];
  const script: Script = (request) => {
    if (isChild(request)) return { text: "child done" };
    const text = allText(request);
    if (!isTool(request)) return call("glob", { pattern: "*" }, "g1");
    if (!text.includes("Started subagent")) {
      return call("spawn_agent", { task_name: "count", message: "CHILD count" }, "s1");
    }
    if (!text.includes("child done")) return call("wait_agent", {}, "w1");
    return { text: "parent done" };
  };
  const context = await setUp(script, (request) => {
    const idle = () => ternChildren(parentPid).map((child) => child.idle);
    if (isChild(request)) atChild.push(idle());
    else if (allText(request).includes("child done")) atEnd.push(idle());
    return Promise.resolve();
  });
  try {
    const parent = startTern(
      ["run", "--mode", "bypass", "go"],
      context.ws.dir,
      { ...context.env, TERN_SUBAGENT_PRESTART: "0" },
    );
    parentPid = parent.pid;
    await parent.stdin.close();
    const out = await parent.output();
    equal(out.code, 0, new TextDecoder().decode(out.stderr));
    // The task's child was started for it (not idle), and it was the only one.
    equal(atChild.length, 1);
    deepEqual(atChild[0], [false]);
    // After the task's child ended, no next idle one was started either.
    deepEqual(atEnd, [[]]);
  } finally {
    await context.stop();
  }
});
