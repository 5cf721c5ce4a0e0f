/**
 * `tern mcp trust` shows what a project's MCP server runs without printing the credentials its
 * definition writes: header and `env` values of credentials show their `${VAR}` references and
 * length, key formats are masked everywhere, and what decides what runs stays in full.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const HEADER_SECRET = "SuperSecretValue1234567890";
const ENV_SECRET = "literal-secret-value-12345";
const GITHUB_TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB";
const URL_PASSWORD = "hunter22pw";
/** The value of the variable a project server's `env` passes on: never shown either. */
const PASSED_TOKEN = "ghp_passedpassedpassedpassedpassedpassed12";

const SERVERS = {
  mcpServers: {
    gh: {
      command: "npx",
      args: ["-y", "server-github", "--token", GITHUB_TOKEN],
      env: {
        API_TOKEN: ENV_SECRET,
        GITHUB_TOKEN: "${GH_TOKEN}",
        NODE_OPTIONS: "--require ./evil.js",
      },
    },
    web: {
      url: `https://bob:${URL_PASSWORD}@example.com/mcp`,
      headers: {
        Authorization: `Bearer ${HEADER_SECRET}`,
        "X-Api-Key": "${DOCS_KEY:-fallback-token-9}",
        "X-Trace": "on",
      },
    },
  },
};

function assertNoSecret(text: string): void {
  const secrets = [HEADER_SECRET, ENV_SECRET, GITHUB_TOKEN, URL_PASSWORD, PASSED_TOKEN];
  for (const secret of [...secrets, "fallback-token"]) {
    ok(!text.includes(secret), `printed ${secret}:\n${text}`);
  }
}

Deno.test("tern mcp trust lists project servers without the secrets their definitions hold", async () => {
  const ws = await tempWorkspace();
  try {
    await Deno.writeTextFile(join(ws.dir, ".mcp.json"), JSON.stringify(SERVERS));
    const env = {
      TERN_HOME: ws.home,
      HOME: ws.home,
      TERN_EXTRA_ENV: "GH_TOKEN",
      GH_TOKEN: PASSED_TOKEN,
    };

    const listed = await runTern(["mcp", "trust"], { cwd: ws.dir, env });
    equal(listed.code, 0, listed.stderr);
    ok(!listed.stderr.includes("warning"), listed.stderr);
    assertNoSecret(listed.stdout + listed.stderr);
    // What the person needs to judge the server: the command, every name set, where each
    // value comes from, and what is hidden and where to read it.
    match(listed.stdout, /gh: npx -y server-github --token \[REDACTED:github-token\] /);
    match(listed.stdout, /env API_TOKEN="<26 chars hidden>", /);
    match(listed.stdout, /GITHUB_TOKEN="\$\{GH_TOKEN\}"/);
    match(listed.stdout, /NODE_OPTIONS="--require \.\/evil\.js"/);
    match(listed.stdout, /read "mcpServers\.gh" in that file/);
    match(listed.stdout, /web: https:\/\/bob:<10 chars hidden>@example\.com\/mcp /);
    match(
      listed.stdout,
      /headers Authorization="Bearer <26 chars hidden>", X-Api-Key="\$\{DOCS_KEY:-<16 chars hidden>\}", X-Trace="on"/,
    );

    const trusted = await runTern(["mcp", "trust", "web"], { cwd: ws.dir, env });
    equal(trusted.code, 0, trusted.stderr);
    assertNoSecret(trusted.stdout + trusted.stderr);
    match(trusted.stdout, /^Trusted web: .*Authorization="Bearer <26 chars hidden>"/m);
    // `gh` can never be trusted (its env loads other code): refused, saying why, no secret.
    const refused = await runTern(["mcp", "trust", "gh"], { cwd: ws.dir, env });
    equal(refused.code, 2, refused.stdout);
    assertNoSecret(refused.stdout + refused.stderr);
    match(refused.stderr, /Cannot trust MCP server "gh": .*"the environment" cannot be pinned/);
  } finally {
    await ws.cleanup();
  }
});
