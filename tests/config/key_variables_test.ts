/**
 * Every setting that names a key variable is checked when tern starts, with the launcher's real
 * permissions: a variable tern's process may not read would count as unset whatever the person
 * exports, so tern says so at once, and how to allow it (TERN_EXTRA_ENV).
 */
import { equal, match } from "node:assert/strict";
import { join } from "node:path";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

/** Each place a config file names a key variable, written with `name`. */
const NAMING = {
  apiKeyEnv: (name: string) => ({ apiKeyEnv: name }),
  "providers.work.apiKeyEnv": (name: string) => ({
    providers: { work: { api: "anthropic", baseUrl: "https://llm.test/v1", apiKeyEnv: name } },
  }),
  "indexEmbeddings.apiKeyEnv": (name: string) => ({
    indexEmbeddings: { baseUrl: "https://embed.test/v1", model: "m", apiKeyEnv: name },
  }),
  "webSearch.keyEnv.tavily": (name: string) => ({
    webSearch: { provider: "tavily", keyEnv: { tavily: name } },
  }),
  "webFetch.readerKeyEnv": (name: string) => ({
    webFetch: { reader: "https://reader.test/", readerKeyEnv: name },
  }),
};

Deno.test("tern config refuses a key variable tern may not read, naming the key and TERN_EXTRA_ENV", async () => {
  const ws = await tempWorkspace();
  try {
    const file = join(ws.home, "config.jsonc");
    const env = { HOME: ws.home, TERN_HOME: ws.home, MY_PROVIDER_KEY: "k-123" };
    for (const [key, naming] of Object.entries(NAMING)) {
      await Deno.writeTextFile(file, JSON.stringify(naming("MY_PROVIDER_KEY")));
      const denied = await runTern(["config"], { cwd: ws.dir, env });
      equal(denied.code, 2, `${key}: ${denied.stderr}`);
      equal(
        denied.stderr.trim(),
        `tern: Cannot read the key variable MY_PROVIDER_KEY named by "${key}" (user config ` +
          `"${file}"): tern's process may read only variables starting with TERN_, OPENAI_, ` +
          `ANTHROPIC_ or OPENROUTER_, VLLM_API_KEY and those listed in TERN_EXTRA_ENV; add ` +
          `MY_PROVIDER_KEY to it (comma-separated names, e.g. TERN_EXTRA_ENV=MY_PROVIDER_KEY), ` +
          `or name a variable starting with TERN_`,
      );
      const allowed = await runTern(["config"], {
        cwd: ws.dir,
        env: { ...env, TERN_EXTRA_ENV: "OTHER,MY_PROVIDER_KEY" },
      });
      equal(allowed.code, 0, `${key}: ${allowed.stderr}`);
      // A TERN_ variable needs nothing more, set or not.
      await Deno.writeTextFile(file, JSON.stringify(naming("TERN_WORK_KEY")));
      const own = await runTern(["config"], { cwd: ws.dir, env });
      equal(own.code, 0, `${key}: ${own.stderr}`);
    }
    // A name not in capitals may be the key itself: it is not echoed.
    const bareKey = "jina_0123456789abcdefDoNotLeak";
    await Deno.writeTextFile(file, JSON.stringify(NAMING["webFetch.readerKeyEnv"](bareKey)));
    const hidden = await runTern(["config"], { cwd: ws.dir, env });
    equal(hidden.code, 2, hidden.stderr);
    match(hidden.stderr, /key variable named by "webFetch\.readerKeyEnv" .*add the name to it/);
    equal(hidden.stderr.includes(bareKey), false, hidden.stderr);

    await Deno.writeTextFile(file, JSON.stringify(NAMING.apiKeyEnv("MY_PROVIDER_KEY")));
    const shown = await runTern(["config"], {
      cwd: ws.dir,
      env: { ...env, TERN_EXTRA_ENV: "MY_PROVIDER_KEY" },
    });
    match(shown.stdout, /^apiKey +set \(from MY_PROVIDER_KEY in the environment\)$/m);
  } finally {
    await ws.cleanup();
  }
});
