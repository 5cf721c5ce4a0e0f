/**
 * The limits a session runs with, from the real config loading (files on disk) and the real
 * model setup (nothing is sent): the context window is no wider than any fallback's, and a
 * project's `models` row never raises a model's output limit above its catalog row's.
 */
import { equal } from "node:assert/strict";
import { join } from "node:path";
import { loadConfig } from "../../src/config/mod.ts";
import { connectModels } from "../../src/harness/models.ts";
import { tempWorkspace } from "../support/tern_process.ts";

const KEYS = { ANTHROPIC_API_KEY: "k-ant", OPENAI_API_KEY: "k-openai" };

/** The session's window and each target's output limit for these config files and flags. */
async function connect(
  files: { user?: unknown; project?: unknown },
  flags: Record<string, unknown>,
): Promise<{ budget: number; outputs: number[] }> {
  const ws = await tempWorkspace();
  try {
    write(join(ws.dir, ".tern", "config.jsonc"), files.project ?? {});
    if (files.user !== undefined) write(join(ws.home, "config.jsonc"), files.user);
    const loaded = await loadConfig({
      cwd: ws.dir,
      env: { ...KEYS, TERN_HOME: ws.home },
      flags,
      warn: () => {},
    });
    const { setup, config } = await connectModels(loaded.config, loaded.sources);
    await setup.router.close?.();
    return {
      budget: config.contextWindow,
      outputs: [setup.primary, ...setup.fallbacks].map((target) => target.info.maxOutputTokens),
    };
  } finally {
    await ws.cleanup();
  }
}

function write(path: string, value: unknown): void {
  Deno.mkdirSync(join(path, ".."), { recursive: true });
  Deno.writeTextFileSync(path, JSON.stringify(value));
}

// claude-sonnet-4-5 takes 200,000 tokens and 64,000 out; qwen2.5-coder at Ollama 32,768.
const MAIN = { model: "claude-sonnet-4-5", provider: "anthropic" };

Deno.test("connectModels() budgets for the smallest window of the main model and its fallbacks", async () => {
  // Before: 200,000, so a request the main model took went to the fallback over its window.
  const used = await connect({ user: { fallback: ["ollama/qwen2.5-coder"] } }, MAIN);
  equal(used.budget, 32_768);
  // A fallback with the larger window leaves the main model's.
  const wider = await connect({}, {
    model: "qwen2.5-coder",
    provider: "ollama",
    fallback: ["anthropic/claude-sonnet-4-5"],
  });
  equal(wider.budget, 32_768);
  equal((await connect({}, MAIN)).budget, 200_000);
});

Deno.test("connectModels() bounds the person's own contextWindow by a fallback's catalog window", async () => {
  const user = { contextWindow: 150_000, fallback: ["ollama/qwen2.5-coder"] };
  equal((await connect({ user }, MAIN)).budget, 32_768);
  // The person's own row for the fallback says what it takes.
  const described = await connect({
    user: { ...user, models: { "ollama/qwen2.5-coder": { contextWindow: 120_000 } } },
  }, MAIN);
  equal(described.budget, 120_000);
  // A fallback the catalog does not know has a guessed window: the person's value stands.
  const unknown = await connect(
    { user: { contextWindow: 150_000, fallback: ["ollama/m-x"] } },
    MAIN,
  );
  equal(unknown.budget, 150_000);
});

Deno.test("connectModels() bounds a fallback's window a project's models row widens", async () => {
  const used = await connect({
    user: { fallback: ["ollama/qwen2.5-coder"] },
    project: { models: { "ollama/qwen2.5-coder": { contextWindow: 100_000 } } },
  }, MAIN);
  equal(used.budget, 32_768);
});

Deno.test("connectModels() caps a project's maxOutputTokens at the catalog row's", async () => {
  // Before: 100,000 out, above the model's 64,000, and the thinking budget grew with it.
  const raised = await connect({
    project: { models: { "claude-sonnet-4-5": { maxOutputTokens: 100_000 } } },
  }, MAIN);
  equal(raised.outputs[0], 64_000);
  // The same for a fallback's row.
  const fallback = await connect({
    user: { fallback: ["ollama/qwen2.5-coder"] },
    project: { models: { "ollama/qwen2.5-coder": { maxOutputTokens: 30_000 } } },
  }, MAIN);
  equal(fallback.outputs[1], 8_192);
  // A project may still lower it.
  const lowered = await connect({
    project: { models: { "claude-sonnet-4-5": { maxOutputTokens: 4_096 } } },
  }, MAIN);
  equal(lowered.outputs[0], 4_096);
  // The person's own row is used as given.
  const theirs = await connect({
    user: { models: { "claude-sonnet-4-5": { maxOutputTokens: 100_000 } } },
  }, MAIN);
  equal(theirs.outputs[0], 100_000);
  // A project's value written into a row of the person's that sets no output limit is capped
  // too (before, it got through: only a window written there was traced to the project).
  const intoTheirs = await connect({
    user: { models: { "claude-sonnet-4-5": { contextWindow: 150_000 } } },
    project: { models: { "claude-sonnet-4-5": { maxOutputTokens: 100_000 } } },
  }, MAIN);
  equal(intoTheirs.outputs[0], 64_000);
});
