/**
 * A fallback with a smaller context window than the main model: the request-size check and
 * compaction budget for the smaller one, so no request goes to the fallback over its window.
 * The real CLI against two scripted servers (the main one failing).
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { estimateRequestTokens } from "../../src/context/tokens.ts";
import { SUMMARY_SYSTEM_PROMPT } from "../../src/context/compaction.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern run sends no request over a fallback's smaller context window", async () => {
  const ws = await tempWorkspace();
  const main = await startScriptedServer(() => ({ fault: "http500" }), { chunkDelayMs: 0 });
  const backup = await startScriptedServer(() => ({ text: "from the backup" }), {
    chunkDelayMs: 0,
  });
  // The main model takes 200,000 tokens, the fallback 8,000.
  await Deno.writeTextFile(
    join(ws.home, "config.jsonc"),
    JSON.stringify({
      providers: { backup: { api: "openai", baseUrl: backup.baseUrl } },
      models: {
        "scripted": { contextWindow: 200_000 },
        "backup/b-model": { contextWindow: 8_000 },
      },
    }),
  );
  const tern = (args: string[]) =>
    runTern(
      [
        "run",
        "--base-url",
        main.baseUrl,
        "-m",
        "scripted",
        "--fallback",
        "backup/b-model",
        ...args,
      ],
      {
        cwd: ws.dir,
        env: { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k", TERN_MAX_RETRIES: "0" },
        signal: AbortSignal.timeout(60_000),
      },
    );
  try {
    // About 19,000 tokens of context: within the main model's window, over the fallback's.
    const agents = join(ws.dir, "AGENTS.md");
    await Deno.writeTextFile(agents, "Follow every rule of the house style. ".repeat(2_000));
    const refused = await tern(["first task"]);
    // Before: the main server failed, and the request went to the fallback over its window.
    equal(refused.code, 7, refused.stdout + refused.stderr);
    match(refused.stderr, /more than the model's context window of 8000/);
    match(refused.stderr, /a fallback model's window is its "models" row's contextWindow/);
    equal(backup.requests.length, 0);
    equal(main.requests.length, 0);

    // A request that fits the fallback goes there once the main model fails.
    await Deno.writeTextFile(agents, "Be brief.");
    const answered = await tern(["-c", "go on"]);
    equal(answered.code, 0, answered.stderr);
    equal(answered.stdout, "from the backup\n");
    equal(backup.requests.length, 1);
    ok(JSON.stringify(backup.requests[0].body).includes("first task"));
  } finally {
    await main.close();
    await backup.close();
    await ws.cleanup();
  }
});

Deno.test("tern run compacts for a fallback's smaller context window", async () => {
  const ws = await tempWorkspace();
  const main = await startScriptedServer(() => ({ fault: "http500" }), { chunkDelayMs: 0 });
  // Each answer about 2,500 tokens: five turns are more than the fallback's 8,000.
  const backup = await startScriptedServer((request) => ({
    text: request.messages[0]?.content === SUMMARY_SYSTEM_PROMPT
      ? "## Goal\nKeep going."
      : "The answer goes on at length. ".repeat(340),
  }), { chunkDelayMs: 0 });
  await Deno.writeTextFile(
    join(ws.home, "config.jsonc"),
    JSON.stringify({
      providers: { backup: { api: "openai", baseUrl: backup.baseUrl } },
      models: {
        "scripted": { contextWindow: 200_000 },
        "backup/b-model": { contextWindow: 8_000 },
      },
    }),
  );
  try {
    for (const [index, task] of ["one", "two", "three", "four", "five"].entries()) {
      const run = await runTern(
        [
          "run",
          "--base-url",
          main.baseUrl,
          "-m",
          "scripted",
          "--fallback",
          "backup/b-model",
          ...(index === 0 ? [] : ["-c"]),
          `task ${task}`,
        ],
        {
          cwd: ws.dir,
          env: { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k", TERN_MAX_RETRIES: "0" },
          signal: AbortSignal.timeout(60_000),
        },
      );
      equal(run.code, 0, run.stderr);
    }
    const sizes = backup.requests.map(({ modelRequest }) =>
      estimateRequestTokens(modelRequest.messages, modelRequest.tools)
    );
    // Before: the fifth request went out with about 10,000 tokens.
    ok(sizes.every((tokens) => tokens <= 8_000), `${sizes}`);
    ok(
      backup.requests.some(({ modelRequest }) =>
        modelRequest.messages[0]?.content === SUMMARY_SYSTEM_PROMPT
      ),
      "a compaction was made",
    );
  } finally {
    await main.close();
    await backup.close();
    await ws.cleanup();
  }
});
