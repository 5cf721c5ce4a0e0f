/**
 * The variable names an MCP config treats as secret are those the sandbox keeps from commands
 * (`*_PASS`, `*_DSN`, `*_PAT`, `*_CREDS`, cookies, sessions, …): a project may not pass one on
 * in disguise, and their values are masked in what a server answers.
 */
import assert from "node:assert/strict";
import { serverSecrets } from "../../src/mcp/types.ts";
import { byName, withMcpConfig } from "./_config_fixture.ts";

const PROJECT_MCP = "ws/.mcp.json";

/** Names the sandbox takes for secrets that the MCP config took for plain words. */
const SECRETS: Record<string, string> = {
  DB_PASS: "hunter2-db-pass",
  PGPASSFILE_PASSPHRASE: "a-passphrase-1",
  SENTRY_DSN: "https://k@sentry.example/1",
  GH_PAT: "pat-value-123456",
  AWS_CREDS: "creds-value-123456",
  BROWSER_COOKIE: "sid=cookie-value",
  WEB_SESSION: "session-value-123456",
  SIGNING_PRIVATE: "private-value-123456",
  APP_SALT: "salt-value-123456",
};

Deno.test("loadMcpConfig() refuses a project's secret-named variable of any kind passed in disguise", async () => {
  await withMcpConfig(async (fixture) => {
    for (const name of Object.keys(SECRETS)) {
      for (
        const [fields, key] of [
          [`"args": ["--level=\${${name}}"]`, "args[0]"],
          [`"env": { "LOG_LEVEL": "\${${name}}" }`, "env.LOG_LEVEL"],
        ]
      ) {
        fixture.write(PROJECT_MCP, `{ "mcpServers": { "t": { "command": "x", ${fields} } } }`);
        const { servers, warnings } = await fixture.loadWarned(SECRETS);
        assert.deepEqual(servers, [], `${name} in ${fields}`);
        assert.equal(warnings.length, 1, `${name} in ${fields}`);
        assert.ok(
          warnings[0].includes(`"mcpServers.t.${key}" uses \${${name}}, whose name looks secret`),
          warnings[0],
        );
        assert.ok(!warnings[0].includes(SECRETS[name]), warnings[0]);
      }
    }
    fixture.write(
      PROJECT_MCP,
      `{ "mcpServers": { "u": { "url": "https://h/mcp?dsn=\${SENTRY_DSN}" } } }`,
    );
    const { servers, warnings } = await fixture.loadWarned(SECRETS);
    assert.deepEqual(servers, []);
    assert.match(
      warnings[0],
      /"mcpServers\.u\.url" uses \$\{SENTRY_DSN\}, whose name looks secret/,
    );
  });
});

Deno.test("serverSecrets() masks the values of every secret-named env entry", async () => {
  await withMcpConfig(async (fixture) => {
    // As the whole value of an entry named so, a project may pass it; and its value is masked.
    const env = Object.fromEntries(Object.keys(SECRETS).map((name) => [name, `\${${name}}`]));
    fixture.write(
      PROJECT_MCP,
      JSON.stringify({ mcpServers: { t: { command: "x", env: { ...env, LEVEL: "debug" } } } }),
    );
    const { servers, warnings } = await fixture.loadWarned(SECRETS);
    assert.deepEqual(warnings, []);
    const t = byName(servers, "t");
    assert.deepEqual(t.env, { ...SECRETS, LEVEL: "debug" });
    assert.deepEqual(serverSecrets(t).sort(), Object.values(SECRETS).sort());

    // A session header carries a credential as an Authorization header does.
    fixture.write(
      PROJECT_MCP,
      `{ "mcpServers": { "h": { "url": "https://h/mcp",
        "headers": { "X-Session-Id": "\${WEB_SESSION}" } } } }`,
    );
    const http = await fixture.loadWarned(SECRETS);
    assert.deepEqual(http.warnings, []);
    assert.deepEqual(serverSecrets(byName(http.servers, "h")), [SECRETS.WEB_SESSION]);
  });
});
