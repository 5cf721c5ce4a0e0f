/**
 * The environment variables tern reads, and the ones shell commands, the tool worker and MCP
 * servers may inherit: every front end draws them from here.
 */
import { personPath } from "../core/host_programs.ts";
import { NETWORK_ENV_NAMES } from "../sandbox/shell_env.ts";

/** Variables a shell command may inherit, and the ones that name host sockets to hide. */
const SHELL_SOURCE_NAMES = [
  "PATH",
  "HOME",
  "USER",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "LC_MESSAGES",
  "TERM",
  "TZ",
  "SSH_AUTH_SOCK",
  "DOCKER_HOST",
  "GPG_AGENT_INFO",
  // For the tool worker only (shell commands never get them): Deno's module cache.
  "DENO_DIR",
  "XDG_CACHE_HOME",
  // Proxy and CA variables, for commands with the network and MCP servers.
  ...NETWORK_ENV_NAMES,
];

/** The variables of `SHELL_SOURCE_NAMES` that are set. */
export function shellSourceEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of SHELL_SOURCE_NAMES) {
    // PATH as the person had it: tern's own may be cut to keep the workspace's programs off
    // the host (host_programs.ts), and commands in the sandbox may run them.
    const value = name === "PATH" ? personPath() : readEnv(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** A variable's value; undefined when unset or when tern may not read it. */
export function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}
