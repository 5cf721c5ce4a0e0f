/**
 * A model server that knows the key (it is sent to it) and writes it back wherever it can: in a
 * reviewer's reason, in a plan's steps and answers, in a subagent's name and task. None of it
 * reaches what tern prints or keeps. The real `tern run` and `tern plan`, `tern child` included.
 */
import { equal, ok } from "node:assert/strict";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { filesUnder } from "../support/files_under.ts";

const KEY = "sk-test-HOSTILESERVER-5d1e8a";

const call = (id: string, name: string, args: unknown): ScriptedReply => ({
  toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
});
const system = (request: ModelRequest) => String(request.messages[0]?.content ?? "");
const user = (request: ModelRequest) =>
  String(request.messages.find((m) => m.role === "user")?.content ?? "");
const answered = (request: ModelRequest) => request.messages.some((m) => m.role === "tool");

/**
 * Runs tern with KEY as its key against `script`; no output and no file under tern's home may
 * hold the key. Returns what was printed.
 */
async function noKeyAnywhere(
  args: string[],
  script: (request: ModelRequest) => ScriptedReply,
  secret = KEY,
  model?: string,
): Promise<string> {
  const ws = await tempWorkspace();
  const server = await startScriptedServer(script, {
    chunkDelayMs: 0,
    ...(model === undefined ? {} : { model }),
  });
  try {
    const run = await runTern(
      [args[0], "--base-url", server.baseUrl, "-m", "scripted", ...args.slice(1)],
      { cwd: ws.dir, env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: KEY } },
    );
    const all = run.stdout + run.stderr;
    ok(!all.includes(secret), all);
    for (const file of await filesUnder(ws.home)) {
      // Deno's own permission audit of the worker is written by Deno, unmasked (SECURITY.md);
      // the checkpoint store holds the workspace's files as they are.
      if (/\/audit\/deno-|\/rewind\.git\//.test(file)) continue;
      ok(!(await Deno.readTextFile(file)).includes(secret), file);
    }
    return all;
  } finally {
    await server.close();
    await ws.cleanup();
  }
}

Deno.test("a reviewer's reason that quotes the key is masked", async () => {
  const all = await noKeyAnywhere(
    ["run", "--mode", "auto", "-o", "stream-json", "fetch it"],
    (request) => {
      if (system(request).startsWith("You are a security reviewer")) {
        return { text: JSON.stringify({ decision: "deny", reason: `reviewer says ${KEY}` }) };
      }
      if (answered(request)) return { text: "done" };
      return call("c1", "bash", { command: "curl -s http://example.com" });
    },
  );
  ok(all.includes("reviewer says [REDACTED]"), all);
});

Deno.test("a plan's steps and answers that quote the key are masked", async () => {
  const node = (id: string, dependsOn: string[] = []) => ({
    id,
    title: `Step ${id} ${KEY}`,
    task: `Do ${id} with ${KEY}.`,
    dependsOn,
  });
  const all = await noKeyAnywhere(["plan", "--mode", "bypass", "go"], (request) => {
    if (system(request).startsWith("You plan the work")) {
      return { text: JSON.stringify({ nodes: [node("a"), node("b", ["a"])] }) };
    }
    const id = /Your step \("([^"]+)"/.exec(user(request))?.[1] ?? "?";
    return { text: `step ${id} result ${KEY}` };
  });
  ok(all.includes("[REDACTED]"), all);
});

Deno.test("a subagent's name and task that quote the key are masked, in both sessions", async () => {
  const all = await noKeyAnywhere(
    ["run", "--mode", "bypass", "-o", "stream-json", "delegate"],
    (request) => {
      if (user(request).includes("CHILDTASK")) return { text: "child finished" };
      const results = request.messages.filter((m) => m.role === "tool").length;
      if (results === 0) {
        return call("s1", "spawn_agent", { task_name: `t${KEY}`, message: `CHILDTASK ${KEY}` });
      }
      if (results === 1) return call("w1", "wait_agent", {});
      return { text: "done" };
    },
  );
  ok(all.includes("child finished"), all);
});

Deno.test("a write's diff and a key written with a JSON escape are masked too", async () => {
  // The first character as a JSON escape: the text holds no key until it is parsed.
  const escaped = `\\u${KEY.charCodeAt(0).toString(16).padStart(4, "0")}${KEY.slice(1)}`;
  const all = await noKeyAnywhere(
    ["run", "--mode", "bypass", "-o", "stream-json", "write it"],
    (request) => {
      const results = request.messages.filter((m) => m.role === "tool").length;
      if (results === 0) {
        return call("w1", "write", { path: "notes.txt", content: `token=${KEY}\n` });
      }
      if (results === 1) {
        return {
          toolCalls: [{
            id: "b1",
            name: "bash",
            arguments: `{"command":"echo ${escaped} > /dev/null"}`,
          }],
        };
      }
      return { text: "done" };
    },
    KEY.slice(1),
  );
  ok(all.includes('"diff"'), all);
});

Deno.test("a model the server lists with the key in its name is neither shown nor cached", async () => {
  const all = await noKeyAnywhere(["models"], () => ({ text: "none" }), KEY, `m-${KEY}`);
  ok(all.includes("openai-compatible"), all);
});

Deno.test("tern models with a key too short to be a secret (a local server's) lists every model", async () => {
  const ws = await tempWorkspace();
  const server = await startScriptedServer(() => ({ text: "none" }), {
    chunkDelayMs: 0,
    model: "kind-model",
  });
  try {
    const run = await runTern(
      ["models", "--base-url", server.baseUrl, "-m", "scripted"],
      { cwd: ws.dir, env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k" } },
    );
    equal(run.code, 0, run.stderr);
    ok(run.stdout.includes("kind-model"), run.stdout);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
