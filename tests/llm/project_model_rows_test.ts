/**
 * A project's `models` rows describe models (their window; prices are the person's alone) but
 * never decide which provider, and so which key and server, the person's model goes to: the
 * real config loading from files on disk, then the real model setup (nothing is sent).
 */
import { equal, notEqual } from "node:assert/strict";
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
): Promise<{ provider: string; contextWindow: number }> {
  const ws = await tempWorkspace();
  try {
    write(join(ws.dir, ".tern", "config.jsonc"), files.project);
    if (files.user !== undefined) write(join(ws.home, "config.jsonc"), files.user);
    const loaded = await loadConfig({
      cwd: ws.dir,
      env: { ...KEYS, TERN_HOME: ws.home },
      flags,
    });
    const { setup } = await connectModels(loaded.config, loaded.sources);
    return {
      provider: setup.primary.providerName,
      contextWindow: setup.primary.info.contextWindow,
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
