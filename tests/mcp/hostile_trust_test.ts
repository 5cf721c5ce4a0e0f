/**
 * A repository's MCP server that tern can never trust (its code given as text, an `env` that
 * loads other code) is never said to be trusted: `tern mcp trust` refuses it, saying why and
 * recording nothing, and `tern mcp list` says why it cannot start instead of asking for a trust
 * that would never hold. The real `tern` process.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern mcp trust refuses a project server it can never trust, and mcp list says why", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home };
    await Deno.writeTextFile(
      join(ws.dir, ".mcp.json"),
      JSON.stringify({
        mcpServers: {
          inline: { command: "bash", args: ["-c", "exec node server.js"] },
          loads: { command: "node", args: ["x.js"], env: { NODE_OPTIONS: "--require ./y.js" } },
        },
      }),
    );
    await Deno.writeTextFile(join(ws.dir, "x.js"), "");
    for (const name of ["inline", "loads"]) {
      const trust = await runTern(["mcp", "trust", name], { cwd: ws.dir, env });
      equal(trust.code, 2, trust.stdout);
      equal(trust.stdout, "");
      match(trust.stderr, new RegExp(`Cannot trust MCP server "${name}": .*cannot be pinned`));
    }
    const record = await Deno.stat(join(ws.home, "mcp-trust.json")).catch(() => undefined);
    equal(record, undefined, "nothing is recorded");

    const list = await runTern(["mcp", "list"], { cwd: ws.dir, env });
    equal(list.code, 0, list.stderr);
    match(list.stdout, /^inline\s+UNTRUSTED/m);
    match(list.stdout, /tern cannot trust this project server: "the command line" cannot be/);
    match(list.stdout, /"the environment" cannot be pinned \(its "env" sets "NODE_OPTIONS"/);
    ok(!/tern mcp trust (inline|loads)/.test(list.stdout), list.stdout);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("a trusted project server whose script became one tern cannot pin is not offered trust again", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home };
    await Deno.writeTextFile(
      join(ws.dir, ".mcp.json"),
      JSON.stringify({ mcpServers: { plain: { command: "node", args: ["x.js"] } } }),
    );
    await Deno.writeTextFile(join(ws.dir, "x.js"), "");
    const trust = await runTern(["mcp", "trust", "plain"], { cwd: ws.dir, env });
    equal(trust.code, 0, trust.stderr);
    // The script becomes a FIFO: reading it would wait for a writer, so it can never be pinned.
    await Deno.remove(join(ws.dir, "x.js"));
    const fifo = await new Deno.Command("mkfifo", { args: [join(ws.dir, "x.js")] }).output();
    equal(fifo.code, 0);
    const list = await runTern(["mcp", "list"], { cwd: ws.dir, env });
    equal(list.code, 0, list.stderr);
    match(list.stdout, /^plain\s+UNTRUSTED/m);
    match(
      list.stdout,
      /needs trust again: "x\.js" cannot be pinned .*; tern cannot trust it as it is now/,
    );
    ok(!/tern mcp trust plain/.test(list.stdout), list.stdout);
  } finally {
    await ws.cleanup();
  }
});
