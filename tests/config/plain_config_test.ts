import assert from "node:assert/strict";
import { parsePlainConfig } from "../../src/config/_plain_config.ts";
import { checkConfigFile, parseConfigFile } from "../../src/config/jsonc_file.ts";
import type { Settings } from "../../src/config/schema.ts";

/** Files of valid plain keys: the quick path reads them. */
const PLAIN = [
  `{"model": "gpt-x"}`,
  `{}`,
  `// my settings\n{\n  "model": "m", // the model\n  /* rounds */ "maxRounds": 30,\n}\n`,
  `{\r\n  "thinking": " low ",\r\n  "model": "m",\r\n}`,
  `{"baseUrl": "http://127.0.0.1:8080/v1/", "provider": "ollama"}`,
  `{"fallback": ["openrouter/qwen/qwen3-coder", " b ",], "mode": "auto"}`,
  `{"fallback": "a, b,", "noSandbox": true, "temperature": 0.5e0}`,
  `{"model": "a\\"b\\u0063 // not a comment", "profile": ":read-only"}`,
  `{"apiKeyEnv": "MY_KEY", "contextWindow": 200000, "compactAt": 0.75}`,
  `/**/{"maxTokens":1}/**/`,
];

/** Files the quick path leaves to the full check: other keys, errors, odd syntax. */
const OTHER = [
  `{"providers": {"local": {"api": "openai", "baseUrl": "http://127.0.0.1:1/v1"}}}`,
  `{"model": "m", "rules": [{"action": "deny", "command": "rm"}]}`,
  `{"profiles": {"mine": {"read": ["/x"]}}}`,
  `{"models": {"m": {"contextWindow": 8000}}}`,
  `{"modle": "m"}`,
  `{"apiKey": "sk-123"}`,
  `{"__proto__": {"model": "m"}}`,
  `{"maxRounds": 0}`,
  `{"maxRounds": "5"}`,
  `{"maxRounds": "x", "maxRounds": 5}`,
  `{"maxRounds": 1/**/0}`,
  `{"maxRounds": 1// x\n0}`,
  `{"noSandbox": tr/**/ue}`,
  `{,}`,
  `{"model": "m",,}`,
  `{"model": ,}`,
  `{"model": "m"},`,
  `[1,]`,
  `null`,
  `"model"`,
  ``,
  `// only a comment`,
  `{"model": "m" /* unterminated`,
  `{"model": "m`,
  `{"model": "a\tb"}`,
  `{"model":\u00a0"m"}`,
  `{'model': 'm'}`,
  `{model: "m"}`,
];

function keysInOrder(settings: Settings): string[] {
  return Object.keys(settings);
}

Deno.test("parsePlainConfig() reads files of plain keys exactly as the full check does", async () => {
  for (const text of PLAIN) {
    const quick = parsePlainConfig(text);
    assert.notEqual(quick, undefined, `quick path gave up on ${JSON.stringify(text)}`);
    const full = await checkConfigFile(text, "config.jsonc");
    assert.deepStrictEqual(quick, full, JSON.stringify(text));
    assert.deepEqual(keysInOrder(quick!), keysInOrder(full), JSON.stringify(text));
  }
});

Deno.test("parsePlainConfig() gives up on structured keys, errors and what JSON cannot say", () => {
  for (const text of OTHER) {
    assert.equal(parsePlainConfig(text), undefined, JSON.stringify(text));
  }
});

Deno.test("parseConfigFile() gives the full check's result or error for every file", async () => {
  for (const text of [...PLAIN, ...OTHER, "\ufeff" + PLAIN[2], '\ufeff{"modle": 1}']) {
    const outcome = async (parse: typeof parseConfigFile) => {
      try {
        return { settings: await parse(text, "/p/config.jsonc") };
      } catch (error) {
        return { error: error instanceof Error ? `${error.name}: ${error.message}` : error };
      }
    };
    assert.deepStrictEqual(
      await outcome(parseConfigFile),
      await outcome(checkConfigFile),
      JSON.stringify(text),
    );
  }
});
