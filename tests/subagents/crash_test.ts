/**
 * Exactly-once delivery under crashes: the parent or the child killed with SIGKILL at each step
 * of the exchange (child running; completion recorded, not delivered; delivered), then the
 * parent continued with `tern run -c`. Each time the parent session ends with one completion
 * for the run, one message that delivered it, and the model sees it once.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { declaredFlags, ROOT, runTern, tempWorkspace } from "../support/tern_process.ts";
import {
  allText,
  call,
  deliveries,
  firstUser,
  records,
  sessionsOf,
  ternChildPids,
  until,
} from "./_helpers.ts";

const isChild = (request: ModelRequest) => firstUser(request).startsWith("CHILD");
const shown = (request: ModelRequest) => allText(request).split("[subagent ").length - 1;

/** The parent's script: spawn, wait, then answer once a completion is in view. */
function parentReply(request: ModelRequest): ScriptedReply {
  const text = allText(request);
  if (!text.includes("Started subagent")) {
    return call("spawn_agent", { task_name: "job", message: "CHILD do the job" }, "s1");
  }
  return shown(request) === 0 ? call("wait_agent", {}, `w${request.messages.length}`) : {
    text: "parent done",
  };
}

/** The pids of `tern child` processes started for the server at `baseUrl`. */
const childPids = ternChildPids;

type Step = "child-running" | "child-killed" | "completion-recorded" | "delivered";

/**
 * Runs the parent, kills it (or the child) at `step`, continues the parent when it was killed,
 * and returns the parent session and the requests.
 */
async function crashAt(step: Step) {
  const ws = await tempWorkspace();
  const release = Promise.withResolvers<void>();
  let parent: Deno.ChildProcess | undefined;
  let killedParent = false;
  const killParent = () => {
    killedParent = true;
    parent?.kill("SIGKILL");
  };
  const parentSession = async () => {
    const sessions = await sessionsOf(ws.home);
    return sessions.find((s) => s.header.subagentOf === undefined);
  };
  let baseUrl = "";
  const beforeReply = async (request: ModelRequest) => {
    if (killedParent && !isChild(request)) return;
    if (step === "child-killed" && isChild(request)) {
      for (const pid of childPids(baseUrl)) Deno.kill(pid, "SIGKILL");
      await release.promise;
    } else if (step === "child-running" && isChild(request)) {
      // The child's answer goes out only after its parent is dead.
      killParent();
      await parent?.status;
    } else if (step === "completion-recorded" && !isChild(request) && shown(request) === 0) {
      if (!allText(request).includes("Started subagent")) return;
      await until(async () => {
        const session = await parentSession();
        return session !== undefined && records(session.entries, "completion").length > 0;
      }, "the completion in the parent session");
      killParent();
      await release.promise;
    } else if (step === "delivered" && !isChild(request) && shown(request) > 0) {
      killParent();
      await release.promise;
    }
  };
  const script = (request: ModelRequest): ScriptedReply =>
    isChild(request) ? { text: "child result R-7" } : parentReply(request);
  const server = await startScriptedServer(script, { chunkDelayMs: 0, beforeReply });
  baseUrl = server.baseUrl;
  const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k" };
  const args = ["run", "--base-url", baseUrl, "-m", "scripted", "--mode", "bypass", "go"];
  try {
    parent = new Deno.Command(Deno.execPath(), {
      args: ["run", ...declaredFlags(env, { cwd: ws.dir, args }), join(ROOT, "main.ts"), ...args],
      cwd: ws.dir,
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const first = await parent.output();
    let resumed;
    if (killedParent) {
      equal(first.signal, "SIGKILL");
      // The dead parent's child may still be finishing: the continued parent waits for it.
      resumed = await runTern(
        ["run", "-c", "--base-url", baseUrl, "-m", "scripted", "--mode", "bypass", "continue"],
        { cwd: ws.dir, env },
      );
      equal(resumed.code, 0, resumed.stderr);
    } else {
      equal(first.code, 0, new TextDecoder().decode(first.stderr));
    }
    const session = (await parentSession())!;
    return { session, requests: server.requests.map((r) => r.modelRequest), resumed };
  } finally {
    release.resolve();
    await server.close();
    await ws.cleanup();
  }
}

/** One completion, delivered by one message, shown once in the last request; returns it. */
function assertExactlyOnce(result: Awaited<ReturnType<typeof crashAt>>) {
  const completions = records(result.session.entries, "completion");
  equal(completions.length, 1);
  const [completion] = completions;
  equal(deliveries(result.session.entries, String(completion.runId)).length, 1);
  const last = result.requests.filter((request) => !isChild(request)).at(-1)!;
  equal(shown(last), 1);
  return completion;
}

Deno.test("a child killed with SIGKILL mid-run is delivered once, as failed", async () => {
  const completion = assertExactlyOnce(await crashAt("child-killed"));
  equal(completion.status, "failed");
  match(String(completion.error), /without a final record/);
});

Deno.test("a parent killed with SIGKILL while its child runs gets the result once on -c", async () => {
  const result = await crashAt("child-running");
  const completion = assertExactlyOnce(result);
  equal(completion.status, "completed");
  equal(completion.content, "child result R-7");
});

Deno.test("a parent killed after the completion was recorded delivers it once on -c", async () => {
  const result = await crashAt("completion-recorded");
  const completion = assertExactlyOnce(result);
  equal(completion.content, "child result R-7");
  // Injected as an agent message at the continued turn's start, not waited for.
  const injected = result.session.entries.filter((entry) =>
    entry.type === "message" && entry.message.role === "user" && entry.mailbox !== undefined
  );
  equal(injected.length, 1);
});

Deno.test("a parent killed right after delivery does not deliver again on -c", async () => {
  const result = await crashAt("delivered");
  const completion = assertExactlyOnce(result);
  equal(completion.status, "completed");
  ok(result.resumed !== undefined);
});
