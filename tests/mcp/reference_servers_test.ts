/**
 * The MCP client against servers nobody here wrote: the npm reference servers
 * `server-everything` (stdio and Streamable HTTP on 127.0.0.1) and `server-filesystem` (stdio).
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { McpServerConfig } from "../../src/mcp/types.ts";
import {
  denoNpm,
  EVERYTHING,
  FILESYSTEM,
  processesMatching,
  referenceServersNeed,
  stdioServer,
  testEnv,
  withManager,
} from "./_servers.ts";
import { testWith } from "../support/needs.ts";

const signal = () => new AbortController().signal;

testWith(
  [referenceServersNeed],
  "server-everything over stdio: tools listed, called, validated",
  async () => {
    await withManager(
      [stdioServer("everything", denoNpm(EVERYTHING, "stdio"))],
      async (manager) => {
        manager.start();
        await manager.settled();
        const [status] = manager.status();
        equal(status.state, "READY", status.error);
        equal(status.server?.name, "mcp-servers/everything");
        const names = manager.tools().map((tool) => tool.name);
        ok(names.includes("mcp__everything__echo"), names.join(", "));
        ok(names.includes("mcp__everything__get-sum"));
        for (const name of names) match(name, /^[A-Za-z0-9_-]{1,64}$/);

        const echo = await manager.tool("mcp__everything__echo")!.run({ message: "hello" }, {
          signal: signal(),
        });
        deepEqual(echo, { status: "SUCCEEDED", output: "Echo: hello" });

        const sum = await manager.tool("mcp__everything__get-sum")!.run({ a: 2, b: 3 }, {
          signal: signal(),
        });
        equal(sum.status, "SUCCEEDED");
        if (sum.status === "SUCCEEDED") match(sum.output, /\b5\b/);

        const bad = await manager.tool("mcp__everything__get-sum")!.run({ a: "two" }, {
          signal: signal(),
        });
        equal(bad.status, "ERROR");
        if (bad.status === "ERROR") equal(bad.code, "INVALID_ARGUMENTS");

        const image = await manager.tool("mcp__everything__get-tiny-image")!.run({}, {
          signal: signal(),
        });
        equal(image.status, "SUCCEEDED");
        if (image.status === "SUCCEEDED") match(image.output, /\[image image\/png, \d+ bytes/);
        // Only tools the server marks readOnlyHint count as read-only.
        equal(manager.tool("mcp__everything__echo")!.readOnly, true);
        equal(manager.tool("mcp__everything__toggle-simulated-logging")!.readOnly, false);
      },
    );
  },
);

testWith(
  [referenceServersNeed],
  "server-filesystem over stdio: writes and reads inside its root, refuses outside",
  async () => {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-mcp-fs-" }));
    try {
      await withManager([stdioServer("fs", denoNpm(FILESYSTEM, root))], async (manager) => {
        manager.start();
        await manager.settled();
        equal(manager.status()[0].state, "READY", manager.status()[0].error);
        equal(manager.tool("mcp__fs__write_file")!.readOnly, false);
        equal(manager.tool("mcp__fs__read_text_file")!.readOnly, true);
        const path = join(root, "note.txt");
        const wrote = await manager.tool("mcp__fs__write_file")!.run(
          { path, content: "written over MCP" },
          { signal: signal() },
        );
        equal(wrote.status, "SUCCEEDED", JSON.stringify(wrote));
        equal(await Deno.readTextFile(path), "written over MCP");
        const read = await manager.tool("mcp__fs__read_text_file")!.run({ path }, {
          signal: signal(),
        });
        deepEqual(read, { status: "SUCCEEDED", output: "written over MCP" });
        const outside = await manager.tool("mcp__fs__read_text_file")!.run(
          { path: "/etc/hostname" },
          { signal: signal() },
        );
        equal(outside.status, "ERROR");
        if (outside.status === "ERROR") {
          equal(outside.code, "EXECUTION_FAILED");
          match(outside.message, /reported an error: .*(denied|outside|not allowed)/i);
        }
      });
      deepEqual(await processesMatching(root), [], "the server is gone after close()");
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
);

testWith(
  [referenceServersNeed],
  "server-everything over Streamable HTTP on 127.0.0.1",
  async () => {
    const port = freePort();
    const run = denoNpm(EVERYTHING, "streamableHttp");
    const server = new Deno.Command(run.command, {
      args: run.args,
      env: { ...testEnv(), PORT: String(port) },
      clearEnv: true,
      cwd: Deno.env.get("TMPDIR") ?? "/tmp",
      stdout: "null",
      stderr: "null",
      detached: true,
    }).spawn();
    try {
      await waitForHttp(`http://127.0.0.1:${port}/mcp`);
      const config: McpServerConfig = {
        ...stdioServer("web", { command: "", args: [] }),
        transport: "http",
        command: undefined,
        url: `http://127.0.0.1:${port}/mcp`,
      };
      await withManager([config], async (manager) => {
        manager.start();
        await manager.settled();
        const [status] = manager.status();
        equal(status.state, "READY", status.error);
        ok(status.tools >= 10, `${status.tools} tools`);
        const echo = await manager.call("web", "echo", { message: "over http" }, signal());
        deepEqual(echo, { status: "SUCCEEDED", output: "Echo: over http" });
      });
    } finally {
      try {
        Deno.kill(-server.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
      await server.status;
    }
  },
);

Deno.test("an HTTP server that is not there is FAILED, not a hang", async () => {
  const config: McpServerConfig = {
    ...stdioServer("gone", { command: "", args: [] }),
    transport: "http",
    command: undefined,
    url: `http://127.0.0.1:${freePort()}/mcp`,
    startupTimeoutMs: 5000,
  };
  await withManager([config], async (manager) => {
    manager.start();
    await manager.settled();
    const [status] = manager.status();
    equal(status.state, "FAILED");
    match(status.error!, /connect|refused|fetch/i);
  });
});

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Polls `url` until something answers (the server is listening), for up to 60 s. */
async function waitForHttp(url: string): Promise<void> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    try {
      const response = await fetch(url, { method: "GET" });
      await response.body?.cancel();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`Nothing answered at ${url} within 60 s`);
}
