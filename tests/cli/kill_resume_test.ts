/**
 * End-to-end: `tern run` killed with SIGKILL at random moments of a long tool-using task, each
 * time continued with `tern run -c`. Every request the model server receives must be well
 * formed (each tool call answered by exactly one tool message, in order), and each must start
 * with everything the one before it sent: nothing done before a kill is lost.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { Message } from "../../src/core/messages.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { INTERRUPTED_MESSAGE, isWellFormed } from "../../src/session/dangling.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { declaredFlags, ROOT, tempWorkspace } from "../support/tern_process.ts";

const KILLS = 15;
/** Tool rounds before the script answers in text: more than the kills can get through. */
const ROUNDS = 400;

/** The conversation a request carried, without the system prompt (which may change). */
function conversation(request: ModelRequest): Message[] {
  return request.messages.filter((message) => message.role !== "system");
}

Deno.test("tern run -c continues a session killed with SIGKILL in the middle of tool calls", async () => {
  const ws = await tempWorkspace();
  // Every third run is killed once a command is surely running (it sleeps long); the others at
  // a random moment while commands of 0.2 s run: in a tool, a model call or a session write.
  let slow = false;
  const script = (request: ModelRequest): ScriptedReply => {
    const round = request.messages.filter((m) => m.role === "assistant" && m.toolCalls).length;
    if (round >= ROUNDS) return { text: "All steps done." };
    const command = (part: string) =>
      `echo ${round}${part} >> steps.log && sleep ${slow ? 5 : 0.2} && echo done ${round}${part}`;
    return {
      toolCalls: ["a", "b"].map((part) => ({
        id: `call_${round}${part}`,
        name: "bash",
        arguments: JSON.stringify({ command: command(part) }),
      })),
    };
  };
  let onRequest = () => {};
  const server = await startScriptedServer(script, {
    chunkDelayMs: 0,
    onRequest: () => onRequest(),
  });
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "sk-test" };
  const start = (args: string[]) =>
    new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...declaredFlags(env, { cwd: ws.dir, args }),
        join(ROOT, "main.ts"),
        ...args,
      ],
      cwd: ws.dir,
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  const common = ["--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass", "-o", "json"];
  const stepsFile = join(ws.dir, "steps.log");
  const steps = () => {
    try {
      return Deno.readTextFileSync(stepsFile);
    } catch {
      return "";
    }
  };
  try {
    for (let kill = 0; kill < KILLS; kill++) {
      slow = kill % 3 === 2;
      const { promise: requested, resolve } = Promise.withResolvers<void>();
      onRequest = resolve;
      const before = steps();
      const child = start(["run", ...common, ...(kill === 0 ? [] : ["-c"]), "work through"]);
      let exited = false;
      child.status.then(() => exited = true);
      await Promise.race([requested, child.status]);
      if (slow) {
        // The next command has started (and sleeps 5 s) once steps.log grows.
        while (steps() === before && !exited) await new Promise((r) => setTimeout(r, 10));
      } else {
        await new Promise((r) => setTimeout(r, Math.random() * 1000));
      }
      if (!exited) child.kill("SIGKILL");
      const status = await child.status;
      await child.stdout.cancel();
      const stderr = await new Response(child.stderr).text();
      equal(status.signal, "SIGKILL", `run ${kill + 1} ended on its own: ${stderr}`);
    }
    onRequest = () => {};
    slow = false;
    const final = start(["run", ...common, "-c", "--max-rounds", "3", "finish"]);
    const out = await final.output();
    const stderr = new TextDecoder().decode(out.stderr);
    const result = JSON.parse(new TextDecoder().decode(out.stdout));
    equal(result.exitReason, "MAX_ROUNDS", stderr);

    const requests = server.requests.map((request) => conversation(request.modelRequest));
    ok(requests.length > KILLS, `only ${requests.length} requests`);
    requests.forEach((messages, i) => {
      ok(
        isWellFormed(messages),
        `request ${i + 1} is not well formed: ${JSON.stringify(messages)}`,
      );
      if (i === 0) return;
      const previous = requests[i - 1];
      deepEqual(messages.slice(0, previous.length), previous, `request ${i + 1} lost messages`);
    });
    const interrupted = requests.at(-1)!.filter((m) =>
      m.role === "tool" && m.content.includes(INTERRUPTED_MESSAGE)
    );
    ok(interrupted.length >= Math.floor(KILLS / 3), "the long commands were not closed");
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
