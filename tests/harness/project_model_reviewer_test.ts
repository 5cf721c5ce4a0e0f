/**
 * A project's `.tern/config.jsonc` may choose the model (the person is told), but never the
 * AUTO reviewer that judges that model's calls: a repository would pick a weaker model, easier
 * to steer, to approve what its injected text asks for. The reviewer keeps the model the
 * person's own settings give, unless they set `reviewModel`. Real `tern run` processes against
 * a scripted server that records which model each request named.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { REVIEWER_SYSTEM } from "../../src/agent/auto_reviewer.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const isReviewer = (request: ModelRequest) => request.messages[0]?.content === REVIEWER_SYSTEM;

/** The models the main requests and the reviewer's named, under these two config files. */
async function modelsUnder(own: unknown, project: unknown, flags: string[] = []) {
  const server = await startScriptedServer((request) => {
    if (isReviewer(request)) return { text: '{"decision":"allow","reason":"fine"}' };
    const answered = request.messages.some((message) => message.role === "tool");
    if (answered) return { text: "done" };
    return {
      toolCalls: [{
        id: "c1",
        name: "bash",
        arguments: JSON.stringify({ command: "touch made.txt" }),
      }],
    };
  }, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    await Deno.writeTextFile(join(ws.home, "config.jsonc"), JSON.stringify(own));
    await Deno.mkdir(join(ws.dir, ".tern"));
    await Deno.writeTextFile(join(ws.dir, ".tern", "config.jsonc"), JSON.stringify(project));
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k" };
    const result = await runTern(
      ["run", "--base-url", server.baseUrl, "--mode", "auto", ...flags, "make a file"],
      { cwd: ws.dir, env },
    );
    equal(result.code, 0, result.stderr);
    const requests = server.requests.map((r) => r.modelRequest);
    return {
      main: [...new Set(requests.filter((r) => !isReviewer(r)).map((r) => r.model))],
      reviewer: [...new Set(requests.filter(isReviewer).map((r) => r.model))],
      made: await Deno.stat(join(ws.dir, "made.txt")).then(() => true, () => false),
    };
  } finally {
    await server.close();
    await ws.cleanup();
  }
}

Deno.test("tern run --mode auto: a project's model is reviewed by the person's own model", async () => {
  const seen = await modelsUnder({ model: "own-model" }, { model: "weak-model" });
  deepEqual(seen.main, ["weak-model"]);
  deepEqual(seen.reviewer, ["own-model"]);
  ok(seen.made, "the reviewed call ran");
});

Deno.test("tern run --mode auto: with no model of the person's, a project's model is still not its reviewer", async () => {
  const seen = await modelsUnder({}, { model: "weak-model" });
  deepEqual(seen.main, ["weak-model"]);
  equal(seen.reviewer.length, 1);
  ok(!seen.reviewer.includes("weak-model"), JSON.stringify(seen.reviewer));
});

Deno.test("tern run --mode auto: the person's reviewModel, or their own choice of model, is kept", async () => {
  const reviewModel = await modelsUnder({ reviewModel: "judge" }, { model: "weak-model" });
  deepEqual(reviewModel.reviewer, ["judge"]);
  // The model on the command line is the person's: it reviews itself, as without a project.
  const flag = await modelsUnder({}, { model: "weak-model" }, ["-m", "mine"]);
  deepEqual([flag.main, flag.reviewer], [["mine"], ["mine"]]);
});
