/**
 * A tool hook's `continue: false` ends the turn: the loop asks the model nothing more and runs
 * no later call of the same reply, and the gate tells the person the hook's reason.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { z } from "zod";
import { runTurn } from "../../src/agent/loop.ts";
import type { ToolMessage } from "../../src/core/messages.ts";
import { ScriptedProvider } from "../../src/llm/scripted.ts";
import type { HookCommand } from "../../src/sandbox/hooks/config.ts";
import { defineTool } from "../../src/tools/define.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { withGate } from "../agent/_gate_box.ts";
import { bwrapNeed } from "../support/needs.ts";

function call(name: string, args: unknown, id: string) {
  return { id, name, arguments: JSON.stringify(args) };
}

Deno.test("runTurn() ends the turn after a call that stops it, running no later call", async () => {
  const log: string[] = [];
  const tool = defineTool({
    name: "step",
    description: "a step",
    parameters: z.strictObject({ value: z.string() }),
    readOnly: false,
    runsIn: "host",
    paths: () => [],
    execute: (args, ctx) => {
      log.push(args.value);
      if (args.value === "stop") ctx.stopTurn?.("the hook said so");
      return Promise.resolve({ output: `did ${args.value}` });
    },
  });
  const provider = new ScriptedProvider([
    { toolCalls: [call("step", { value: "stop" }, "c1"), call("step", { value: "later" }, "c2")] },
    { text: "never asked" },
  ]);
  const result = await runTurn({
    messages: [{ role: "user", content: "go" }],
    provider,
    model: "scripted",
    tools: new ToolRegistry([tool]),
    workspace: "/nonexistent",
    emit: () => {},
  });
  equal(result.exitReason, "COMPLETED");
  deepEqual(log, ["stop"]);
  equal(provider.requests.length, 1);
  const results = result.messages.filter((m): m is ToolMessage => m.role === "tool");
  deepEqual(results.map((m) => m.toolCallId), ["c1", "c2"]);
  match(results[1].content, /Not run: a hook stopped the turn \(the hook said so\)/);
});

function hookTest(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, ignore: !bwrapNeed.ok, fn });
}

const STOP = `cat >/dev/null; echo '{"continue": false, "stopReason": "enough for today"}'`;

for (const event of ["PreToolUse", "PostToolUse"] as const) {
  hookTest(
    `PermissionGate ends the turn on a ${event} hook's continue: false, and says why`,
    async () => {
      const hook: HookCommand = {
        event,
        matcher: "Bash",
        command: "bash .hooks/stop.sh",
        timeoutS: 60,
      };
      await withGate({ mode: "bypass", hooks: [hook] }, async (box) => {
        await Deno.mkdir(join(box.ws, ".hooks"));
        await Deno.writeTextFile(join(box.ws, ".hooks", "stop.sh"), STOP);
        const told: string[] = [];
        const hooks = box.gate.options.hooks!;
        const tell = hooks.tell.bind(hooks);
        hooks.tell = (text) => {
          told.push(text);
          tell(text);
        };
        const stops: string[] = [];
        const obs = await box.tools.get("bash")!.run({ command: "echo ran" }, {
          workspace: box.ws,
          signal: new AbortController().signal,
          callId: "c1",
          stopTurn: (reason) => stops.push(reason),
        });
        deepEqual(stops, ["enough for today"]);
        ok(
          told.some((text) => text === `A ${event} hook stopped the turn: enough for today`),
          told.join("\n"),
        );
        const record = box.audit.find((entry) => entry.tool === `hook:${event}`)!;
        equal(record.reason, "enough for today");
        if (event === "PreToolUse") equal(obs.status, "ERROR");
        else {
          equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
          if (obs.status === "SUCCEEDED") {
            match(obs.output, /The turn was stopped: enough for today/);
          }
        }
      });
    },
  );
}
