/**
 * A SessionEnd hook that never ends (a repository's, trusted once) cannot hold tern's close:
 * it is cut to `SESSION_END_MAX_S`, Ctrl-C stops it at once, the person is told, and its
 * process is gone. Real hook scripts in the real sandbox, the model a scripted server.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { openAgentSession } from "../../src/harness/agent_session.ts";
import { SESSION_END_MAX_S } from "../../src/harness/session_hooks.ts";
import { showWarningsIn } from "../../src/core/warnings.ts";
import { spawnLineProcess } from "../support/line_process.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import { bwrapNeed } from "../support/needs.ts";
import { processesWith, withHookProject } from "./_hostile_project.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** A trusted SessionEnd hook that marks its start and then sleeps `seconds`. */
function withHangingEnd(seconds: number, body: (dir: string) => Promise<void>): Promise<void> {
  const hooks = {
    SessionEnd: [{ hooks: [{ type: "command", command: "bash .hooks/end.sh", timeout: 600 }] }],
  };
  const scripts = {
    "end.sh": `cat >/dev/null; touch "$CLAUDE_PROJECT_DIR/end-started"; sleep ${seconds}`,
  };
  return withHookProject(hooks, scripts, body);
}

/** `promise`'s value, or undefined when it takes more than `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let guard: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) =>
    guard = setTimeout(() => resolve(undefined), ms)
  );
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(guard);
  }
}

Deno.test({
  name: "Conversation.close() stops a SessionEnd hook past SESSION_END_MAX_S, and says so",
  ignore: !bwrapNeed.ok,
  fn: async () => {
    await withHangingEnd(621, async (dir) => {
      await withScriptedServer([{ text: "done" }], async (server) => {
        const warnings: string[] = [];
        const restore = showWarningsIn((text) => warnings.push(text));
        try {
          const agent = await openAgentSession({
            workspace: dir,
            flags: { baseUrl: server.baseUrl, mode: "bypass" },
            emit: () => {},
            warn: (text) => warnings.push(text),
          });
          await agent.conversation.turn("please start");
          const started = performance.now();
          const closed = await within(agent.close().then(() => true), 60_000);
          const took = performance.now() - started;
          ok(closed, "the close waited for the SessionEnd hook's own timeout");
          ok(took < (SESSION_END_MAX_S + 15) * 1000, `the close took ${Math.round(took)} ms`);
        } finally {
          restore();
        }
        match(
          warnings.join("\n"),
          new RegExp(`SessionEnd hook "bash .hooks/end.sh" timed out after ${SESSION_END_MAX_S} s`),
        );
        deepEqual(await processesWith("sleep 621"), []);
      });
    });
  },
});

Deno.test({
  name: "tern run: Ctrl-C while a SessionEnd hook runs stops it at once, and says so",
  ignore: !bwrapNeed.ok,
  fn: async () => {
    await withHangingEnd(622, async (dir) => {
      await withScriptedServer([{ text: "done" }], async (server) => {
        const tern = new Deno.Command(join(ROOT, "bin/tern"), {
          args: ["run", "--base-url", server.baseUrl, "-m", "scripted", "please start"],
          cwd: dir,
          stdout: "piped",
          stderr: "piped",
        }).spawn();
        const output = tern.output();
        for (
          let i = 0;
          i < 1200 && !(await Deno.stat(join(dir, "end-started")).catch(() => null));
          i++
        ) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        ok(await Deno.stat(join(dir, "end-started")), "the SessionEnd hook never started");
        const started = performance.now();
        tern.kill("SIGINT");
        // Past the bound, a second Ctrl-C (which exits at once) ends the test.
        const ended = await within(output, (SESSION_END_MAX_S - 3) * 1000);
        if (ended === undefined) tern.kill("SIGINT");
        const { stderr } = ended ?? await output;
        ok(ended, `tern waited ${Math.round(performance.now() - started)} ms after Ctrl-C`);
        match(
          new TextDecoder().decode(stderr),
          /SessionEnd hook "bash \.hooks\/end\.sh" could not run: it was stopped, as tern was closing and was interrupted/,
        );
        deepEqual(await processesWith("sleep 622"), []);
      });
    });
  },
});

Deno.test({
  name: "AgentSession.close(signal) stops a SessionEnd hook once the signal fires, and says so",
  ignore: !bwrapNeed.ok,
  fn: async () => {
    await withHangingEnd(60.0417, async (dir) => {
      await withScriptedServer([{ text: "done" }], async (server) => {
        const warnings: string[] = [];
        const restore = showWarningsIn((text) => warnings.push(text));
        let logged = "";
        let path = "";
        let pids: string[] = [];
        try {
          const agent = await openAgentSession({
            workspace: dir,
            flags: { baseUrl: server.baseUrl, mode: "bypass" },
            emit: () => {},
            warn: (text) => warnings.push(text),
          });
          await agent.conversation.turn("please start");
          path = agent.session.path;
          logged = await Deno.readTextFile(path);
          const cut = new AbortController();
          const closing = agent.close(cut.signal).then(() => true);
          for (let i = 0; i < 600 && pids.length === 0; i++) {
            await new Promise((resolve) => setTimeout(resolve, 50));
            pids = (await processesWith("sleep 60\\.0417")).map((line) => line.split(" ")[0]);
          }
          ok(pids.length > 0, "the SessionEnd hook never started");
          await new Promise((resolve) => setTimeout(resolve, 200));
          const started = performance.now();
          cut.abort();
          // A generous guard: the bound itself is SESSION_END_MAX_S, the hook sleeps 60 s.
          const closed = await within(closing, 8_000);
          ok(
            closed,
            `the close went on ${Math.round(performance.now() - started)} ms after the abort`,
          );
        } finally {
          restore();
        }
        match(
          warnings.join("\n"),
          /SessionEnd hook "bash \.hooks\/end\.sh" could not run: it was stopped, as tern was closing and was interrupted/,
        );
        for (const pid of pids) {
          ok(!(await Deno.stat(`/proc/${pid}`).catch(() => null)), `the hook's ${pid} is left`);
        }
        equal(await Deno.readTextFile(path), logged, "the session log changed at the close");
      });
    });
  },
});

/**
 * A real `tern <args>` in a workspace `dir` whose session `drive` runs, then closes (its stdin
 * ended): once the
 * SessionEnd hook (sleeping `seconds`) started, `signal` comes; tern must end within the 8 s
 * guard, say the hook was stopped, and leave no process of it. Returns the exit code.
 */
async function cutAtClose(
  args: string[],
  seconds: number,
  signal: Deno.Signal,
  drive: (tern: ReturnType<typeof spawnLineProcess>, dir: string) => Promise<void>,
): Promise<number> {
  let code = -1;
  await withHangingEnd(seconds, async (dir) => {
    await withScriptedServer([{ text: "done" }], async (server) => {
      const tern = spawnLineProcess([...args, "--base-url", server.baseUrl, "-m", "scripted"], {
        cwd: dir,
        env: {
          TERN_HOME: Deno.env.get("TERN_HOME")!,
          HOME: Deno.env.get("HOME")!,
          TERN_API_KEY: "sk-test",
        },
      });
      let finished = false;
      try {
        await drive(tern, dir);
        // The end of stdin closes the session: its SessionEnd hook starts.
        const closed = tern.finish();
        for (let i = 0; i < 600 && !(await exists(join(dir, "end-started"))); i++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        ok(await exists(join(dir, "end-started")), "the SessionEnd hook never started");
        const started = performance.now();
        tern.signal(signal);
        const ended = await within(closed, 8_000);
        ok(ended, `tern went on ${Math.round(performance.now() - started)} ms after ${signal}`);
        finished = true;
        match(
          ended.stderr,
          /SessionEnd hook "bash \.hooks\/end\.sh" could not run: it was stopped, as tern was closing and was interrupted/,
        );
        deepEqual(await processesWith(`sleep ${String(seconds).replace(".", "\\.")}`), []);
        code = ended.code;
      } finally {
        if (!finished) await tern.kill();
      }
    });
  });
  return code;
}

function exists(path: string): Promise<boolean> {
  return Deno.stat(path).then(() => true, () => false);
}

Deno.test({
  name: "tern rpc: Ctrl-C while its close runs a SessionEnd hook stops the hook at once",
  ignore: !bwrapNeed.ok,
  fn: async () => {
    const code = await cutAtClose(["rpc"], 60.0419, "SIGINT", async (rpc) => {
      await rpc.waitFor((line) => line.type === "ready");
      await rpc.send({ type: "prompt", id: 1, message: "please start" });
      await rpc.waitFor((line) => line.type === "response" && line.id === 1);
    });
    equal(code, 0);
  },
});

Deno.test({
  name: "tern acp: Ctrl-C while its sessions close stops a SessionEnd hook at once",
  ignore: !bwrapNeed.ok,
  fn: async () => {
    await cutAtClose(["acp"], 60.0421, "SIGINT", async (acp, dir) => {
      const request = (id: number, method: string, params: unknown) =>
        acp.send({ jsonrpc: "2.0", id, method, params });
      const answered = (id: number) =>
        acp.waitFor((line) => line.id === id && ("result" in line || "error" in line));
      await request(1, "initialize", { protocolVersion: 1, clientCapabilities: {} });
      await answered(1);
      const created = await request(2, "session/new", { cwd: dir, mcpServers: [] })
        .then(() => answered(2)) as { result?: { sessionId?: string } };
      const sessionId = created.result?.sessionId;
      ok(sessionId, JSON.stringify(created));
      await request(3, "session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] });
      await answered(3);
    });
  },
});

Deno.test({
  name:
    "tern fed through a pipe: SIGTERM while its close runs a SessionEnd hook stops the hook at once",
  ignore: !bwrapNeed.ok,
  fn: async () => {
    await cutAtClose([], 60.0423, "SIGTERM", (tern) => tern.sendRaw("please start\n"));
  },
});
