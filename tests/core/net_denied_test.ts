/**
 * netDeniedMessage(): a connection Deno refused, in tern's words. The tests run with
 * --allow-net=127.0.0.1, so any other host is really refused.
 */
import { equal, match, ok } from "node:assert/strict";
import { netDeniedMessage } from "../../src/core/net_denied.ts";

async function refusedFetch(): Promise<unknown> {
  try {
    await fetch("http://not-granted.invalid:8123/v1");
  } catch (error) {
    return error;
  }
  throw new Error("fetch to a host the test may not reach succeeded");
}

Deno.test("netDeniedMessage() names the refused host and how to allow it", async () => {
  const error = await refusedFetch();
  ok(error instanceof Deno.errors.NotCapable, String(error));
  const message = netDeniedMessage(error, 'MCP server "docs"') ?? "";
  match(message, /^Cannot connect to MCP server "docs": /);
  ok(message.includes('"not-granted.invalid:8123" is not among them'), message);
  match(message, /TERN_EXTRA_HOSTS/);
  ok(!message.includes("--allow-net"), "no advice to rerun Deno with a flag");
});

Deno.test("netDeniedMessage() finds the denial behind wrapping errors, and nothing else", async () => {
  const wrapped = new Error("Error POSTing to endpoint", { cause: await refusedFetch() });
  ok(netDeniedMessage(wrapped, "x")?.includes("not-granted.invalid:8123"));
  const refused = new TypeError("error sending request: connection refused");
  equal(netDeniedMessage(refused, "x"), undefined);
  equal(netDeniedMessage("Requires net access", "x"), undefined);
});
