/**
 * A project's `models` rows describe models (their window; prices are the person's alone) but
 * never decide which provider, and so which key and server, the person's model goes to: the
 * real config loading from files on disk, then the real model setup (nothing is sent).
 */
import { equal, match, notEqual } from "node:assert/strict";
import { join } from "node:path";
import { loadConfig } from "../../src/config/mod.ts";
import { connectModels } from "../../src/harness/models.ts";
import { tempWorkspace } from "../support/tern_process.ts";

const KEYS = { ANTHROPIC_API_KEY: "k-ant", OPENAI_API_KEY: "k-openai" };

/**
 * The provider and the model's window the session would use in a workspace with `project`
 * as its `.tern/config.jsonc` (and `user` as the person's), the person choosing `flags`.
 */
async function connect(
  files: { project: unknown; user?: unknown },
  flags: { model: string; provider?: string },
): Promise<
  {
    provider: string;
    contextWindow: number;
    maxOutputTokens: number;
    budget: number;
    warnings: string[];
  }
> {
  const ws = await tempWorkspace();
  const warnings: string[] = [];
  try {
    write(join(ws.dir, ".tern", "config.jsonc"), files.project);
    if (files.user !== undefined) write(join(ws.home, "config.jsonc"), files.user);
    const loaded = await loadConfig({
      cwd: ws.dir,
      env: { ...KEYS, TERN_HOME: ws.home },
      flags,
      warn: (message) => warnings.push(message),
    });
    const { setup, config } = await connectModels(loaded.config, loaded.sources);
    return {
      provider: setup.primary.providerName,
      contextWindow: setup.primary.info.contextWindow,
      maxOutputTokens: setup.primary.info.maxOutputTokens,
      budget: config.contextWindow,
      warnings,
    };
  } finally {
    await ws.cleanup();
  }
}

function write(path: string, value: unknown): void {
  Deno.mkdirSync(join(path, ".."), { recursive: true });
  Deno.writeTextFileSync(path, JSON.stringify(value));
}

Deno.test("a project's models row never sends the person's catalog model to another provider", async () => {
  // claude-sonnet-4-5 is Anthropic's; a row under openai would have sent it, with the person's
  // OpenAI key, to OpenAI.
  const used = await connect(
    { project: { models: { "openai/claude-sonnet-4-5": { contextWindow: 1234 } } } },
    { model: "claude-sonnet-4-5" },
  );
  equal(used.provider, "anthropic");
});

Deno.test("a project's models row never gives the person's own model a provider", async () => {
  const project = { models: { "anthropic/mymodel": { contextWindow: 4321 } } };
  const used = await connect({ project }, { model: "mymodel" });
  notEqual(used.provider, "anthropic");
  // It still describes the model where the person sends it there.
  const chosen = await connect({ project }, { model: "mymodel", provider: "anthropic" });
  equal(chosen.provider, "anthropic");
  equal(chosen.contextWindow, 4321);
});

Deno.test("the person's own models row still picks its provider, whatever the project adds to it", async () => {
  const used = await connect({
    user: { models: { "anthropic/mymodel": {} } },
    project: { models: { "anthropic/mymodel": { contextWindow: 4321 } } },
  }, { model: "mymodel" });
  equal(used.provider, "anthropic");
  equal(used.contextWindow, 4321);
});

// qwen2.5-coder at Ollama takes 32,768 tokens (the built-in catalog).
const SMALL = { model: "qwen2.5-coder", provider: "ollama" };

Deno.test("connectModels() bounds a project's contextWindow by the catalog's window of a small model", async () => {
  // Before: 100,000, so no compaction until every request was three times what the model takes.
  const used = await connect({ project: { contextWindow: 100_000 } }, SMALL);
  equal(used.budget, 32_768);
  // A project may still narrow it.
  equal((await connect({ project: { contextWindow: 16_000 } }, SMALL)).budget, 16_000);
});

Deno.test("connectModels() bounds the window a project's models row claims by the person's catalog", async () => {
  const used = await connect({
    project: { models: { "qwen2.5-coder": { contextWindow: 100_000 } } },
  }, SMALL);
  equal(used.budget, 32_768);
  const narrower = await connect({
    project: { models: { "qwen2.5-coder": { contextWindow: 8_000 } } },
  }, SMALL);
  equal(narrower.budget, 8_000);
});

Deno.test("connectModels() keeps the person's own contextWindow over the catalog's", async () => {
  // They may run the model with a longer context than the catalog knows of (a local server's).
  const used = await connect({ user: { contextWindow: 100_000 }, project: {} }, SMALL);
  equal(used.budget, 100_000);
  const theirs = await connect({
    user: { models: { "qwen2.5-coder": { contextWindow: 65_536 } } },
    project: {},
  }, SMALL);
  equal(theirs.budget, 65_536);
});

Deno.test("loadConfig() keeps the window of the person's models row when a project's row for the same key is wider", async () => {
  const user = { models: { "qwen2.5-coder": { contextWindow: 16_000 } } };
  // Before: the rows merged field by field, and the project's 100,000 was the budget.
  const used = await connect({
    user,
    project: { models: { "qwen2.5-coder": { contextWindow: 100_000 } } },
  }, SMALL);
  equal(used.budget, 16_000);
  equal(used.contextWindow, 16_000);
  equal(used.warnings.length, 1, used.warnings.join("\n"));
  match(
    used.warnings[0],
    /^Ignoring "models\.qwen2\.5-coder\.contextWindow" 100000 from project config ".*config\.jsonc": it is not narrower than 16000 \(user config ".*config\.jsonc"\), and a project's files may only narrow it$/,
  );
  // A project may still narrow it.
  const narrower = await connect({
    user,
    project: { models: { "qwen2.5-coder": { contextWindow: 8_000 } } },
  }, SMALL);
  equal(narrower.budget, 8_000);
  equal(narrower.warnings.length, 0, narrower.warnings.join("\n"));
});

Deno.test("connectModels() bounds by the catalog's the window a project's file writes into the person's row", async () => {
  // The person's row names another field only: the window stays the catalog's 32,768.
  const user = { models: { "qwen2.5-coder": { images: false } } };
  const used = await connect({
    user,
    project: { models: { "qwen2.5-coder": { contextWindow: 100_000 } } },
  }, SMALL);
  equal(used.budget, 32_768);
  // A project may still narrow it.
  const narrower = await connect({
    user,
    project: { models: { "qwen2.5-coder": { contextWindow: 8_000 } } },
  }, SMALL);
  equal(narrower.budget, 8_000);
});

Deno.test("loadConfig() keeps the person's maxOutputTokens when a project's row for the same key is higher", async () => {
  const user = { models: { "qwen2.5-coder": { maxOutputTokens: 2_048 } } };
  const used = await connect({
    user,
    project: { models: { "qwen2.5-coder": { maxOutputTokens: 8_192, images: true } } },
  }, SMALL);
  equal(used.maxOutputTokens, 2_048);
  match(used.warnings.join("\n"), /Ignoring "models\.qwen2\.5-coder\.maxOutputTokens" 8192/);
  const lower = await connect({
    user,
    project: { models: { "qwen2.5-coder": { maxOutputTokens: 1_024 } } },
  }, SMALL);
  equal(lower.maxOutputTokens, 1_024);
});
