/** `tern config` shows the structured settings too, one line each, with nothing secret. */
import assert from "node:assert/strict";
import { describeConfig, loadConfig } from "../../src/config/mod.ts";
import { withFixture } from "./_fixture.ts";

Deno.test("describeConfig() shows each structured setting on one line, hiding header values", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const file = write(
      "home/.tern/config.jsonc",
      JSON.stringify({
        providers: {
          work: {
            api: "anthropic",
            baseUrl: "https://llm.test/v1",
            apiKeyEnv: "TERN_WORK_KEY",
            headers: { Authorization: "Bearer hdr-secret-123" },
          },
        },
        webSearch: { provider: "tavily", keyEnv: { tavily: "tvly_secretLooking" } },
        rules: [{ action: "deny", command: "git push" }],
        diagnostics: { enabled: false },
      }),
    );
    const { config, sources } = await loadConfig({ cwd, env: { HOME: home } });
    const text = describeConfig(config, sources);
    const user = `  (user config "${file}")`;
    const line = (key: string) => text.split("\n").find((l) => l.startsWith(`${key} `)) ?? "";
    assert.match(line("providers"), /"work":\{"api":"anthropic".*"apiKeyEnv":"TERN_WORK_KEY"/);
    assert.match(line("providers"), /"headers":\{"Authorization":"…"\}/);
    assert.ok(line("providers").endsWith(user), line("providers"));
    assert.match(line("webSearch"), /"keyEnv":\{"tavily":"\(hidden\)"\}/);
    assert.match(line("rules"), /\[\{"action":"deny","command":"git push"\}\]/);
    assert.match(line("diagnostics"), /\{"enabled":false\}/);
    assert.match(line("limits"), /"processes":1024.*"toolSeconds":120\} {2}\(default\)$/);
    assert.match(text, /^profiles +not set$/m);
    assert.ok(!text.includes("hdr-secret") && !text.includes("secretLooking"), text);
  });
});

Deno.test("describeConfig() hides the credentials of every URL inside a structured setting", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write(
      "home/.tern/config.jsonc",
      JSON.stringify({
        webFetch: { reader: "https://me:reader-pw-123@reader.test/" },
        indexEmbeddings: {
          baseUrl: "https://embed.test/v1?api-key=embedkey456",
          model: "e",
        },
        providers: { work: { baseUrl: "https://u:provider-pw-789@llm.test/v1" } },
      }),
    );
    const { config, sources } = await loadConfig({ cwd, env: { HOME: home } });
    const text = describeConfig(config, sources);
    for (const secret of ["reader-pw-123", "embedkey456", "provider-pw-789"]) {
      assert.ok(!text.includes(secret), text);
    }
    assert.match(text, /^webFetch +\{"reader":"https:\/\/\*\*\*@reader\.test\/"\}/m);
    assert.match(text, /"baseUrl":"https:\/\/embed\.test\/v1\?api-key=\*\*\*"/);
  });
});
