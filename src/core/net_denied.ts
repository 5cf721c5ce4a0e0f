/**
 * tern's own process may connect only to the hosts its launcher grants (`--allow-net` in
 * bin/_env.sh: the provider presets and every URL in tern's configuration, environment and
 * command line). When Deno refuses a connection, this says which host and how to allow it,
 * instead of Deno's advice to run again with a flag.
 */

/**
 * The message for a connection Deno refused because tern's process may not reach the host,
 * or undefined when `error` (or an error it was caused by) is something else. `what` names
 * the other side: `model API at "https://example.com"`, `MCP server "docs"`.
 */
export function netDeniedMessage(error: unknown, what: string): string | undefined {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    const denied = current instanceof Deno.errors.NotCapable ||
      /Requires net access to "/.test(current.message);
    if (denied) return describe(current.message, what);
    current = current.cause;
  }
  return undefined;
}

function describe(denial: string, what: string): string {
  const host = /net access to "([^"]+)"/.exec(denial)?.[1];
  return `Cannot connect to ${what}: tern's process may connect only to the hosts named in ` +
    `its configuration, environment or command line, and ${
      host ? `"${host}"` : "this host"
    } is not among them; write the URL in ~/.tern/config.jsonc (or the MCP file), or add ` +
    `the host to TERN_EXTRA_HOSTS`;
}
