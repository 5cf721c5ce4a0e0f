/** McpManager and McpConnection against the fault fixture server: lifecycle and fault cases. */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { alive, faultServer, processesMatching, withManager } from "./_servers.ts";
import { readOnlyHintCounts } from "../../src/mcp/mcp_tool.ts";

Deno.test("McpManager starts a server, lists its tools and calls one", async () => {
  await withManager([faultServer("fault", "ok")], async (manager) => {
    manager.start();
    await manager.settled();
    const [status] = manager.status();
    equal(status.state, "READY");
    deepEqual(status.server, { name: "fault", version: "1" });
    const names = manager.tools().map((tool) => tool.name);
    ok(names.includes("mcp__fault__echo"), names.join(", "));
    const echo = manager.tool("mcp__fault__echo")!;
    equal(echo.readOnly, true, "echo is annotated readOnlyHint");
    equal(manager.tool("mcp__fault__slow")!.readOnly, false, "no annotation: not read-only");
    const obs = await echo.run({ message: "hi" }, { signal: new AbortController().signal });
    deepEqual(obs, { status: "SUCCEEDED", output: "echo: hi" });
  });
});

Deno.test("McpManager takes a project server's readOnlyHint only when its sandbox can change nothing", async () => {
  // The fault server's echo says readOnlyHint. A project's server is the repository's word.
  await withManager([faultServer("fault", "ok", { scope: "project" })], async (manager) => {
    manager.start();
    await manager.settled();
    equal(manager.status()[0].state, "READY", manager.status()[0].error);
    equal(manager.tool("mcp__fault__echo")!.readOnly, false);
  });
  const sandbox = (writable: string[], network: boolean) => ({ writable, network });
  equal(readOnlyHintCounts({ scope: "user", sandbox: undefined }), true);
  equal(readOnlyHintCounts({ scope: "user", sandbox: sandbox(["/w"], true) }), true);
  equal(readOnlyHintCounts({ scope: "project", sandbox: undefined }), false);
  equal(readOnlyHintCounts({ scope: "project", sandbox: sandbox(["/w"], false) }), false);
  equal(readOnlyHintCounts({ scope: "project", sandbox: sandbox([], true) }), false);
  equal(readOnlyHintCounts({ scope: "project", sandbox: sandbox([], false) }), true);
});

Deno.test("McpManager reads every page of tools/list, following nextCursor", async () => {
  await withManager([faultServer("fault", "paged")], async (manager) => {
    manager.start();
    await manager.settled();
    const [status] = manager.status();
    equal(status.state, "READY", status.error);
    const names = manager.tools().map((tool) => tool.name).sort();
    deepEqual(
      names,
      ["change", "crash", "echo", "fail", "image", "slow", "spawn", "write"].map((n) =>
        `mcp__fault__${n}`
      ),
    );
    // A tool from the last page is callable.
    const media = await manager.tool("mcp__fault__image")!.run({}, {
      signal: new AbortController().signal,
    });
    equal(media.status, "SUCCEEDED", JSON.stringify(media));
    // A refresh after list_changed pages too: the added tool sits on the last page.
    const refreshed = new Promise<void>((resolve) => manager.onChange(resolve));
    await manager.tool("mcp__fault__change")!.run({}, { signal: new AbortController().signal });
    await refreshed;
    equal(manager.tools().length, 9, manager.tools().map((tool) => tool.name).join(", "));
    ok(manager.tool("mcp__fault__added"));
  });
});

Deno.test("a server whose tools/list never stops paging is FAILED, not followed forever", async () => {
  await withManager(
    [faultServer("endless", "endless"), faultServer("circular", "circular")],
    async (manager) => {
      manager.start();
      await manager.settled();
      const [endless, circular] = manager.status();
      equal(endless.state, "FAILED");
      match(endless.error!, /tools\/list has more than 100 pages/);
      equal(circular.state, "FAILED");
      match(circular.error!, /tools\/list gave the cursor "from-2" twice/);
      deepEqual(manager.tools(), []);
    },
  );
});

Deno.test("an MCP tool validates arguments against its input schema before calling", async () => {
  await withManager([faultServer("fault", "ok")], async (manager) => {
    manager.start();
    await manager.settled();
    const obs = await manager.tool("mcp__fault__echo")!.run(
      { message: 42 },
      { signal: new AbortController().signal },
    );
    equal(obs.status, "ERROR");
    if (obs.status !== "ERROR") return;
    equal(obs.code, "INVALID_ARGUMENTS");
    match(obs.message, /Invalid arguments for "mcp__fault__echo": .*message.*string/);
  });
});

Deno.test("an MCP tool's isError result and its media become observations", async () => {
  await withManager([faultServer("fault", "ok")], async (manager) => {
    manager.start();
    await manager.settled();
    const signal = new AbortController().signal;
    const failed = await manager.tool("mcp__fault__fail")!.run({}, { signal });
    deepEqual(failed, {
      status: "ERROR",
      code: "EXECUTION_FAILED",
      message: 'MCP tool "mcp__fault__fail" reported an error: it failed',
    });
    const media = await manager.tool("mcp__fault__image")!.run({}, { signal });
    equal(media.status, "SUCCEEDED");
    if (media.status !== "SUCCEEDED") return;
    match(media.output, /\[image image\/png, 4 bytes: not shown\]/);
    match(media.output, /\[resource file:\/\/\/x\.txt text\/plain\]\nresource text/);
  });
});

Deno.test("notifications/tools/list_changed refreshes the tools", async () => {
  await withManager([faultServer("fault", "ok")], async (manager) => {
    manager.start();
    await manager.settled();
    equal(manager.tool("mcp__fault__added"), undefined);
    const changed = new Promise<void>((resolve) =>
      manager.onChange(() => manager.tool("mcp__fault__added") && resolve())
    );
    await manager.tool("mcp__fault__change")!.run({}, { signal: new AbortController().signal });
    await changed;
    ok(manager.tool("mcp__fault__added"));
  });
});

Deno.test("a storm of list_changed makes one tools/list at a time, and one more after it", async () => {
  await withManager([faultServer("storm", "storm")], async (manager) => {
    manager.start();
    await manager.settled();
    const signal = new AbortController().signal;
    const changed = new Promise<void>((resolve) =>
      manager.onChange(() => manager.tool("mcp__storm__added") && resolve())
    );
    await manager.tool("mcp__storm__change")!.run({}, { signal });
    await changed;
    // Five notifications 400 ms apart, a listing takes 600 ms: the last refresh ends by then.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const stats = await manager.tool("mcp__storm__echo")!.run({ message: "x" }, { signal });
    const output = stats.status === "SUCCEEDED" ? stats.output : JSON.stringify(stats);
    const [, total, most] = /lists (\d+), at once (\d+)/.exec(output) ?? [];
    equal(Number(most), 1, output);
    // The start's listing, then at most a few refreshes for five notifications.
    ok(Number(total) >= 2 && Number(total) <= 6, output);
  });
});

Deno.test("a server listing more than 16 MiB of tool definitions is FAILED, naming the limit", async () => {
  await withManager([faultServer("bulky", "bulky")], async (manager) => {
    manager.start();
    await manager.settled();
    const [status] = manager.status();
    equal(status.state, "FAILED");
    match(status.error!, /tools\/list has more than 16 MiB of tool definitions/);
    deepEqual(manager.tools(), []);
  });
});

Deno.test("a server that exits at once is FAILED with its exit code and stderr", async () => {
  await withManager([faultServer("dead", "exit")], async (manager) => {
    manager.start();
    await manager.settled();
    const [status] = manager.status();
    equal(status.state, "FAILED");
    match(status.error!, /code 3/);
    match(status.error!, /fatal: cannot start/);
    deepEqual(manager.tools(), []);
  });
});

Deno.test("a server that never answers initialize fails at its startup timeout, leaving no process", async () => {
  const server = faultServer("mute", "silent", { startupTimeoutMs: 700 });
  await withManager(
    [server],
    async (manager) => {
      manager.start();
      await manager.settled();
      const [status] = manager.status();
      equal(status.state, "FAILED");
      match(status.error!, /did not finish starting within 700 ms/);
      deepEqual(await processesMatching(server.tag), [], "the silent server was killed");
    },
  );
});

Deno.test("a server printing non-JSON on stdout is FAILED, naming what it printed", async () => {
  const server = faultServer("noisy", "garbage");
  await withManager([server], async (manager) => {
    manager.start();
    await manager.settled();
    const [status] = manager.status();
    equal(status.state, "FAILED");
    match(status.error!, /non-JSON.*hello, not json/);
    deepEqual(await processesMatching(server.tag), []);
  });
});

Deno.test("a server with an unsupported protocol version is FAILED", async () => {
  await withManager([faultServer("old", "old-protocol")], async (manager) => {
    manager.start();
    await manager.settled();
    const [status] = manager.status();
    equal(status.state, "FAILED");
    match(status.error!, /protocol version is not supported.*1999-01-01/);
  });
});

Deno.test("a server dying mid-call gives an ERROR observation and FAILED, never a hang", async () => {
  await withManager([faultServer("fragile", "ok")], async (manager) => {
    manager.start();
    await manager.settled();
    const obs = await manager.tool("mcp__fragile__crash")!.run({}, {
      signal: new AbortController().signal,
    });
    equal(obs.status, "ERROR");
    if (obs.status !== "ERROR") return;
    equal(obs.code, "EXECUTION_FAILED");
    match(obs.message, /MCP server "fragile" closed the connection during "crash"/);
    const [status] = manager.status();
    equal(status.state, "FAILED");
    deepEqual(manager.tools(), [], "a FAILED server offers no tools");
  });
});

Deno.test("a server's own error with code -32000 is its error, and the server stays READY", async () => {
  await withManager([faultServer("busy", "ok")], async (manager) => {
    manager.start();
    await manager.settled();
    const obs = await manager.tool("mcp__busy__fail")!.run({ rpc: true }, {
      signal: new AbortController().signal,
    });
    equal(obs.status, "ERROR");
    if (obs.status !== "ERROR") return;
    match(obs.message, /busy: try again later/);
    ok(!/closed the connection/.test(obs.message), obs.message);
    equal(manager.status()[0].state, "READY");
    const again = await manager.tool("mcp__busy__echo")!.run({ message: "hi" }, {
      signal: new AbortController().signal,
    });
    equal(again.status, "SUCCEEDED");
  });
});

Deno.test("a call over the request timeout is a TIMEOUT observation", async () => {
  await withManager(
    [faultServer("slowpoke", "ok", { requestTimeoutMs: 300 })],
    async (manager) => {
      manager.start();
      await manager.settled();
      const obs = await manager.tool("mcp__slowpoke__slow")!.run({ ms: 5000 }, {
        signal: new AbortController().signal,
      });
      equal(obs.status, "ERROR");
      if (obs.status !== "ERROR") return;
      equal(obs.code, "TIMEOUT");
      match(obs.message, /did not answer "slow" within 300 ms/);
      equal(manager.status()[0].state, "READY", "a slow call does not end the server");
    },
  );
});

Deno.test("a cancelled call is a CANCELLED observation", async () => {
  await withManager([faultServer("fault", "ok")], async (manager) => {
    manager.start();
    await manager.settled();
    const controller = new AbortController();
    const running = manager.tool("mcp__fault__slow")!.run({ ms: 5000 }, {
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 100);
    const obs = await running;
    equal(obs.status, "ERROR");
    if (obs.status === "ERROR") equal(obs.code, "CANCELLED");
  });
});

Deno.test("close() ends a stdio server's whole process tree and is idempotent", async () => {
  let child = 0;
  await withManager([faultServer("parent", "ok")], async (manager) => {
    manager.start();
    await manager.settled();
    const obs = await manager.tool("mcp__parent__spawn")!.run({}, {
      signal: new AbortController().signal,
    });
    equal(obs.status, "SUCCEEDED");
    if (obs.status !== "SUCCEEDED") return;
    child = Number(obs.output.trim());
    ok(await alive(child), "the server's child runs");
    await manager.close();
    await manager.close();
    equal(manager.status()[0].state, "CLOSED");
  });
  ok(child > 0);
  equal(await alive(child), false, "the server's child was ended with it");
});

Deno.test("disabled and untrusted servers are listed and never started", async () => {
  const off = faultServer("off", "ok", { enabled: false });
  const project = faultServer("project", "ok", { scope: "project" });
  await withManager(
    [off, project],
    async (manager) => {
      equal(manager.startable, 0);
      manager.start();
      await manager.settled();
      const states = manager.status().map((s) => [s.name, s.state]);
      deepEqual(states, [["off", "DISABLED"], ["project", "UNTRUSTED"]]);
      match(manager.status()[1].error!, /tern mcp trust project/);
      deepEqual(await processesMatching(off.tag), []);
      deepEqual(await processesMatching(project.tag), []);
      // Trusting it in the session starts it.
      equal((await manager.startServer("project")).state, "READY");
    },
    { trusted: (server) => server.scope === "user" },
  );
});

Deno.test("McpManager.secrets() collects secret-looking env values and credential headers", async () => {
  const http = {
    ...faultServer("web", "ok"),
    transport: "http" as const,
    url: "http://127.0.0.1:1/mcp",
    headers: { Authorization: "Bearer abc123token", Accept: "text/plain" },
  };
  const local = faultServer("local", "ok", { env: { GH_TOKEN: "ghtok-1", LOG_LEVEL: "debug" } });
  await withManager([http, local], (manager) => {
    deepEqual(manager.secrets().sort(), ["Bearer abc123token", "abc123token", "ghtok-1"].sort());
    return Promise.resolve();
  });
});

Deno.test("close() while a server is still starting ends the start at once", async () => {
  const server = faultServer("slowstart", "silent", { startupTimeoutMs: 60_000 });
  await withManager([server], async (manager) => {
    manager.start();
    await manager.close();
    const [status] = manager.status();
    equal(status.state, "CLOSED");
    // Not the startup timeout's message: close() aborted the start.
    equal(status.error, "closed while starting");
    deepEqual(await processesMatching(server.tag), []);
  });
});
