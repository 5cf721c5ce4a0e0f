import { equal, match, ok } from "node:assert/strict";
import { describeServer } from "../../src/harness/mcp_describe.ts";
import type { McpServerConfig } from "../../src/mcp/types.ts";

function project(fields: Partial<McpServerConfig>): McpServerConfig {
  return {
    name: "s",
    file: "/w/.mcp.json",
    key: "mcpServers.s",
    scope: "project",
    transport: "stdio",
    command: "node",
    args: ["server.js"],
    env: {},
    headers: {},
    enabled: true,
    startupTimeoutMs: 30_000,
    requestTimeoutMs: 120_000,
    fingerprint: "f",
    ...fields,
  };
}

Deno.test("describeServer() shows a credential's references and length, never its literal text", () => {
  const written = {
    API_TOKEN: "literal-secret-value-12345",
    DB_PASSWORD: "${USER_NAME}:${PASSWORD:-hunter2}",
    GITHUB_TOKEN: "${GITHUB_TOKEN}",
    LOG_LEVEL: "debug",
  };
  const text = describeServer(
    project({ env: { ...written }, written: { env: written, headers: {} } }),
  );
  match(
    text,
    /env API_TOKEN="<26 chars hidden>", DB_PASSWORD="\$\{USER_NAME\}:\$\{PASSWORD:-<7 chars hidden>\}", GITHUB_TOKEN="\$\{GITHUB_TOKEN\}", LOG_LEVEL="debug"/,
  );
  ok(!text.includes("literal-secret") && !text.includes("hunter2"), text);
  match(text, /values that look secret are not shown: read "mcpServers\.s" in that file/);
});

Deno.test("describeServer() says when it hid something, so a hostile definition cannot hide what runs unseen", () => {
  // A "private key" in an argument is masked to the end of the command line; the rest of the
  // description and the note pointing at the definition still show.
  const text = describeServer(
    project({
      args: ["-e", "-----BEGIN PRIVATE KEY-----", "require('./evil.js')"],
      env: { NODE_OPTIONS: "--require ./evil.js" },
      written: { env: { NODE_OPTIONS: "--require ./evil.js" }, headers: {} },
      sandbox: { network: true, writable: ["/w"] },
    }),
  );
  match(text, /^node -e '\[REDACTED:private-key\]/);
  match(text, /NODE_OPTIONS="--require \.\/evil\.js"/);
  match(text, /in bubblewrap with the network/);
  match(text, /values that look secret are not shown: read "mcpServers\.s" in that file/);
  // Nothing hidden, no note.
  equal(
    describeServer(project({})),
    "node server.js (from /w/.mcp.json)",
  );
});
