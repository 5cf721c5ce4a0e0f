/** A temporary tern home and workspace for MCP config tests; removed after each use. */
import assert from "node:assert/strict";
import { exitCodeForError } from "../../src/cli/exit_codes.ts";
import { dirname, join } from "node:path";
import { ConfigError } from "../../src/config/errors.ts";
import { loadMcpConfig, type McpConfigResult } from "../../src/mcp/config.ts";
import type { McpServerConfig } from "../../src/mcp/types.ts";

export interface McpConfigFixture {
  /** Stands in for ~/.tern. */
  ternHome: string;
  /** The workspace (a real path). */
  workspace: string;
  /** Writes `text` to `path` (relative to the fixture root), creating folders; returns the path. */
  write(path: string, text: string): string;
  /** Loads the config of this home and workspace with `env` as the only variables. */
  load(env?: Record<string, string>): Promise<McpConfigResult>;
  /** Loads as a front end does (problems are warnings), returning the warnings too. */
  loadWarned(env?: Record<string, string>): Promise<McpConfigResult & { warnings: string[] }>;
}

/** Runs `fn` with fresh `home/.tern` and `ws/` folders under a temp root, then deletes the root. */
export async function withMcpConfig(
  fn: (fixture: McpConfigFixture) => Promise<void>,
): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern_mcp_config_" }));
  const ternHome = join(root, "home", ".tern");
  const workspace = join(root, "ws");
  await Deno.mkdir(ternHome, { recursive: true });
  await Deno.mkdir(workspace);
  const fixture: McpConfigFixture = {
    ternHome,
    workspace,
    write(path, text) {
      const file = join(root, path);
      Deno.mkdirSync(dirname(file), { recursive: true });
      Deno.writeTextFileSync(file, text);
      return file;
    },
    load: (env = {}) => loadMcpConfig({ ternHome, workspace, env: (name) => env[name] }),
    async loadWarned(env = {}) {
      const warnings: string[] = [];
      const result = await loadMcpConfig({
        ternHome,
        workspace,
        env: (name) => env[name],
        warn: (text) => warnings.push(text),
      });
      return { ...result, warnings };
    },
  };
  try {
    await fn(fixture);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** The ConfigError that loading rejects with. */
export async function loadError(
  fixture: McpConfigFixture,
  env: Record<string, string> = {},
): Promise<ConfigError> {
  try {
    await fixture.load(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${error}`);
    assert.equal(exitCodeForError(error), 2);
    return error;
  }
  throw new assert.AssertionError({ message: "loadMcpConfig() did not reject" });
}

/** The server called `name`; fails the test when there is none. */
export function byName(servers: McpServerConfig[], name: string): McpServerConfig {
  const server = servers.find((candidate) => candidate.name === name);
  assert.ok(server, `no server "${name}"`);
  return server;
}
