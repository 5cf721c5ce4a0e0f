/**
 * End-to-end: a planner whose graph is built to break tern rather than to be run. A dependency
 * list of hundreds of thousands of entries, a dependency holding terminal escapes: the real
 * `tern plan` against the scripted model, refused with a clear error and nothing obeyed.
 */
import { equal, match, ok } from "node:assert/strict";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const system = (request: ModelRequest) => String(request.messages[0]?.content ?? "");

/** Runs `tern plan` whose planner always answers `answer`; its exit, output and planner calls. */
async function planWith(answer: ScriptedReply) {
  const ws = await tempWorkspace();
  let plannerCalls = 0;
  const server = await startScriptedServer((request) => {
    if (system(request).startsWith("You plan the work")) {
      plannerCalls++;
      return answer;
    }
    return { text: "done" };
  }, { chunkDelayMs: 0 });
  try {
    const run = await runTern(
      ["plan", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass", "task"],
      { cwd: ws.dir, env: { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "sk-plan-graph-1" } },
    );
    return { ...run, plannerCalls };
  } finally {
    await server.close();
    await ws.cleanup();
  }
}

Deno.test("tern plan refuses a step depending on 300,000 ids with the planning error, not a crash", async () => {
  const deps = Array.from({ length: 300_000 }, (_, i) => `x${i}`);
  const run = await planWith({
    text: JSON.stringify({
      nodes: [{ id: "a", title: "A", task: "Do a." }, {
        id: "b",
        title: "B",
        task: "Do b.",
        dependsOn: deps,
      }],
    }),
  });
  equal(run.code, 1, run.stderr);
  equal(run.plannerCalls, 2, "one corrective retry");
  match(run.stderr, /rejected twice/);
  match(run.stderr, /"dependsOn"/);
  ok(!/RangeError|call stack| {4}at /.test(run.stderr), run.stderr);
  ok(run.stderr.length < 4000, `${run.stderr.length} characters`);
});

Deno.test("tern plan never writes a dependency's terminal escapes to the terminal", async () => {
  const hostile = ["\x1b]0;owned\x07", "\x1b[2J", "\x9b31m", "\u202eevil"];
  const run = await planWith({
    text: JSON.stringify({
      nodes: [{ id: "a", title: "A", task: "Do a." }, {
        id: "b",
        title: "B",
        task: "Do b.",
        dependsOn: hostile,
      }],
    }),
  });
  equal(run.code, 1, run.stderr);
  match(run.stderr, /rejected twice/);
  ok(
    // deno-lint-ignore no-control-regex
    !/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/.test(run.stderr),
    JSON.stringify(run.stderr),
  );
});

Deno.test("tern plan -c --append names what is wrong with a bad append, exit 2, nothing run", async () => {
  const ws = await tempWorkspace();
  const server = await startScriptedServer((request) => {
    if (system(request).startsWith("You plan the work")) {
      return { text: JSON.stringify({ nodes: [{ id: "a", title: "A", task: "Do a." }] }) };
    }
    return { text: "done" };
  }, { chunkDelayMs: 0 });
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "sk-plan-graph-2" };
  const flags = ["--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass"];
  try {
    const first = await runTern(["plan", ...flags, "just a"], { cwd: ws.dir, env });
    equal(first.code, 0, first.stderr);
    const node = (id: unknown, extra: Record<string, unknown> = {}) => ({
      id,
      title: "T",
      task: "Do it.",
      ...extra,
    });
    const bad: Array<[string, RegExp]> = [
      ["{nodes:", /Invalid --append: not JSON/],
      ["null", /Invalid --append: expected \{"nodes"/],
      ['{"nodes":{}}', /Invalid --append: expected \{"nodes"/],
      ['{"nodes":[]}', /Invalid --append: no nodes to add/],
      ["[]", /Invalid --append: no nodes to add/],
      [JSON.stringify([node("../../etc/passwd")]), /"id" must be 1 to 40 letters/],
      [JSON.stringify([node("a")]), /duplicate id "a"/],
      [JSON.stringify([node("b", { dependsOn: ["a", "a"] })]), /"b" depends on "a" twice/],
      [JSON.stringify([node("b", { dependsOn: ["b"] })]), /"b" depends on itself/],
      [JSON.stringify([node("b", { dependsOn: Array(60).fill("a") })]), /at most 49/],
      [
        JSON.stringify(Array.from({ length: 60 }, (_, n) => node(`n${n}`))),
        /makes 61: a plan has at most 50/,
      ],
      [JSON.stringify([node("b", { run: "rm -rf /" })]), /unknown key\(s\) "run"/],
    ];
    for (const [append, expected] of bad) {
      const run = await runTern(["plan", ...flags, "-c", "--append", append], {
        cwd: ws.dir,
        env,
      });
      equal(run.code, 2, `${append.slice(0, 80)}: ${run.stderr}`);
      match(run.stderr, expected);
      ok(!/internal error| {4}at /.test(run.stderr), run.stderr);
    }
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
