/** Server definitions and helpers shared by the MCP tests. */
import { McpManager } from "../../src/mcp/manager.ts";
import type { McpServerConfig } from "../../src/mcp/types.ts";
import { type FaultMode, faultServerCommand } from "../fixtures/mcp/fault_server.ts";
import { REFERENCE_SERVERS } from "../support/needs.ts";

export { referenceServersNeed } from "../support/needs.ts";

/** The reference servers' npm versions, pinned (bin/setup caches them). */
export const EVERYTHING = REFERENCE_SERVERS.everything;
export const FILESYSTEM = REFERENCE_SERVERS.filesystem;

/**
 * Runs an npm package with the current Deno, away from the project's lock file and modules, from
 * Deno's cache only: a test never downloads (bin/setup fetched the package).
 */
export function denoNpm(pkg: string, ...args: string[]): { command: string; args: string[] } {
  return {
    command: Deno.execPath(),
    args: [
      "run",
      "-A",
      "--cached-only",
      "--no-lock",
      "--node-modules-dir=none",
      "--no-config",
      pkg,
      ...args,
    ],
  };
}

/** A stdio server definition as the config loader would produce it. */
export function stdioServer(
  name: string,
  run: { command: string; args: string[] },
  extra: Partial<McpServerConfig> = {},
): McpServerConfig {
  return {
    name,
    file: "/test/mcp.json",
    key: `servers.${name}`,
    scope: "user",
    transport: "stdio",
    command: run.command,
    args: run.args,
    env: {},
    headers: {},
    enabled: true,
    startupTimeoutMs: 60_000,
    requestTimeoutMs: 60_000,
    fingerprint: name,
    ...extra,
  };
}

/**
 * The fixture server in `mode`. Its command line ends in a tag unique to this call (the fixture
 * ignores it), so a test finds exactly its own processes with `processesMatching(tag)`.
 */
export function faultServer(
  name: string,
  mode: FaultMode,
  extra: Partial<McpServerConfig> = {},
): McpServerConfig & { tag: string } {
  const run = faultServerCommand(mode);
  const tag = `tag-${crypto.randomUUID()}`;
  return { ...stdioServer(name, { ...run, args: [...run.args, tag] }, extra), tag };
}

/** The environment stdio servers get in tests: enough for Deno to find its cache. */
export function testEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** A manager for `servers` (all trusted), closed after `body` whatever happens. */
export async function withManager(
  servers: McpServerConfig[],
  body: (manager: McpManager, dir: string) => Promise<void>,
  options: { trusted?: (server: McpServerConfig) => boolean } = {},
): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-mcp-test-" }));
  const manager = new McpManager({
    servers,
    trusted: options.trusted ?? (() => true),
    workspace: dir,
    clientVersion: "test",
    baseEnv: testEnv(),
  });
  try {
    await body(manager, dir);
  } finally {
    await manager.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** True while process `pid` exists (a zombie counts as gone). */
export async function alive(pid: number): Promise<boolean> {
  const out = await new Deno.Command("ps", {
    args: ["-o", "stat=", "-p", String(pid)],
    stdout: "piped",
    stderr: "null",
  }).output();
  const state = new TextDecoder().decode(out.stdout).trim();
  return state !== "" && !state.startsWith("Z");
}

export { processesMatching } from "../support/tmux.ts";
