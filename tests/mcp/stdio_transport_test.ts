/** StdioProcessTransport against real processes: the fault fixture server and small scripts. */
import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { dirname } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types";
import {
  StdioProcessTransport,
  type StdioTransportOptions,
} from "../../src/mcp/stdio_transport.ts";
import { bwrapArgvFor } from "../../src/sandbox/bwrap.ts";
import { type FaultMode, faultServerCommand } from "../fixtures/mcp/fault_server.ts";
import { bwrapTest, planFor, withBox } from "../sandbox/_bwrap_helpers.ts";

const ENV = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: Deno.env.get("HOME") ?? "/" };

/** A started transport that records what it reports. */
interface Session {
  transport: StdioProcessTransport;
  messages: JSONRPCMessage[];
  errors: Error[];
  closes: number;
  /** Settles once onclose has fired. */
  closed: Promise<void>;
  /** Sends a request and waits for the answer with its id (rejects when the transport closes). */
  request(id: number, method: string, params?: Record<string, unknown>): Promise<JSONRPCMessage>;
  /** Settles once `count` messages have arrived (rejects when the transport closes first). */
  received(count: number): Promise<void>;
}

/** Runs `fn` with a started transport in a temp dir; closes it and removes the dir afterwards. */
async function withTransport(
  command: { command: string; args: string[] },
  fn: (session: Session) => Promise<void>,
  options: Partial<StdioTransportOptions> = {},
): Promise<void> {
  const cwd = await Deno.makeTempDir({ prefix: "tern_mcp_stdio_" });
  const transport = new StdioProcessTransport({ ...command, cwd, env: ENV, ...options });
  const waiters = new Map<number, (message: JSONRPCMessage) => void>();
  const counters: (() => void)[] = [];
  const { promise: closed, resolve: fireClosed } = Promise.withResolvers<void>();
  const session: Session = {
    transport,
    messages: [],
    errors: [],
    closes: 0,
    closed,
    request(id, method, params) {
      const answer = new Promise<JSONRPCMessage>((resolve, reject) => {
        waiters.set(id, resolve);
        closed.then(() => reject(new Error(`closed before the answer to request ${id}`)));
      });
      return transport.send({ jsonrpc: "2.0", id, method, params }).then(() => answer);
    },
    received(count) {
      return new Promise<void>((resolve, reject) => {
        const check = () => session.messages.length >= count && resolve();
        counters.push(check);
        check();
        closed.then(() => reject(new Error(`closed before ${count} messages arrived`)));
      });
    },
  };
  transport.onmessage = (message) => {
    session.messages.push(message);
    for (const check of counters) check();
    if ("id" in message && typeof message.id === "number") waiters.get(message.id)?.(message);
  };
  transport.onerror = (error) => session.errors.push(error);
  transport.onclose = () => {
    session.closes++;
    fireClosed();
  };
  try {
    await transport.start();
    await fn(session);
  } finally {
    await transport.close();
    await Deno.remove(cwd, { recursive: true });
  }
}

function fault(mode: FaultMode) {
  return faultServerCommand(mode);
}

/** A Deno script as the server: `deno eval <code>` with the test's Deno. */
function script(code: string) {
  return { command: Deno.execPath(), args: ["eval", "--no-config", code] };
}

function resultOf(message: JSONRPCMessage): Record<string, unknown> {
  ok("result" in message, `expected a result, got ${JSON.stringify(message)}`);
  return message.result as Record<string, unknown>;
}

/** Whether `pid` is a live process (a zombie counts as gone), from `ps`. */
async function isAlive(pid: number): Promise<boolean> {
  const ps = await new Deno.Command("ps", { args: ["-o", "stat=", "-p", String(pid)] }).output();
  const state = new TextDecoder().decode(ps.stdout).trim();
  return ps.success && state !== "" && !state.startsWith("Z");
}

/**
 * Fails when `pid` still runs after a while (a SIGKILL lands when the kernel gets to it, later
 * on a loaded machine; what is never killed here runs far longer).
 */
async function assertGone(pid: number): Promise<void> {
  for (let tries = 0; await isAlive(pid) && tries < 200; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  ok(!await isAlive(pid), `process ${pid} is still running`);
}

const INITIALIZE = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "test", version: "0" },
};

Deno.test("StdioProcessTransport carries requests and answers to a real server", async () => {
  let pid = 0;
  await withTransport(fault("ok"), async (session) => {
    pid = session.transport.pid!;
    const init = resultOf(await session.request(1, "initialize", INITIALIZE));
    deepEqual(init.serverInfo, { name: "fault", version: "1" });
    await session.transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const list = resultOf(await session.request(2, "tools/list"));
    const names = (list.tools as { name: string }[]).map((tool) => tool.name);
    deepEqual(names, ["echo", "slow", "crash", "fail", "spawn", "change", "image", "write"]);
    const echo = resultOf(
      await session.request(3, "tools/call", { name: "echo", arguments: { message: "hi" } }),
    );
    deepEqual(echo.content, [{ type: "text", text: "echo: hi" }]);
    const unknown = await session.request(4, "no/such/method");
    ok("error" in unknown);
    equal(unknown.error.code, -32601);
    await session.transport.close();
    deepEqual(session.errors, []);
    equal(session.closes, 1);
    equal(session.transport.exitStatus?.code, 0);
  });
  await assertGone(pid);
});

Deno.test("StdioProcessTransport splits lines across reads and within one read", async () => {
  const big = "é".repeat(150_000);
  const code = `
    const encode = (text) => new TextEncoder().encode(text);
    const note = (n, data) => JSON.stringify({ jsonrpc: "2.0", method: "n", params: { n, data } });
    const write = async (bytes) => {
      Deno.stdout.writeSync(bytes);
      await new Promise((resolve) => setTimeout(resolve, 30));
    };
    await write(encode(note(1, "a") + "\\n" + note(2, "b") + "\\r\\n\\n   \\n" + note(3, "c")));
    const bytes = encode("\\n" + note(4, "é".repeat(150000)) + "\\n");
    await write(bytes.subarray(0, 1001));
    await write(bytes.subarray(1001, 150001));
    await write(bytes.subarray(150001));
    for await (const _ of Deno.stdin.readable) { /* until the client closes */ }
  `;
  await withTransport(script(code), async (session) => {
    await session.received(4);
    await session.transport.close();
    deepEqual(session.errors, []);
    const params = session.messages.map((message) =>
      "params" in message ? message.params as { n: number; data: string } : undefined
    );
    deepEqual(params.map((param) => param?.n), [1, 2, 3, 4]);
    deepEqual(params.slice(0, 3).map((param) => param?.data), ["a", "b", "c"]);
    ok(params[3]?.data === big, "the big message arrived whole");
  });
});

Deno.test("StdioProcessTransport reports a server that exits at once, with code and stderr", async () => {
  await withTransport(fault("exit"), async (session) => {
    await session.closed;
    equal(session.closes, 1);
    equal(session.errors.length, 1);
    match(session.errors[0].message, /^MCP server ".*" exited with code 3: fatal: cannot start$/);
    equal(session.transport.exitStatus?.code, 3);
    equal(session.transport.stderrTail, "fatal: cannot start");
    await rejects(
      session.transport.send({ jsonrpc: "2.0", id: 1, method: "ping" }),
      /the connection is closed/,
    );
  });
});

Deno.test("StdioProcessTransport reports a server's stderr on one line: it cannot forge tern's own lines", async () => {
  const code = `
    Deno.stderr.writeSync(new TextEncoder().encode(
      "boom\\ntern: MCP server \\"good\\" is ready\\r\\n\\x1b[2Jdone\\n",
    ));
    Deno.exit(4);
  `;
  await withTransport(script(code), async (session) => {
    await session.closed;
    const message = session.errors[0]?.message ?? "";
    equal(message.split(/\r\n|\r|\n/).length, 1, JSON.stringify(message));
    match(message, /exited with code 4: boom↵tern: MCP server "good" is ready␍↵␛\[2Jdone$/);
  });
});

Deno.test("StdioProcessTransport reports a server dying mid-call and closes", async () => {
  await withTransport(fault("ok"), async (session) => {
    await session.request(1, "initialize", INITIALIZE);
    await rejects(session.request(2, "tools/call", { name: "crash" }), /closed before the answer/);
    match(session.errors[0]?.message ?? "", /exited with code 7$/);
    equal(session.closes, 1);
  }, { label: 'MCP server "fault"' });
});

Deno.test("StdioProcessTransport treats non-JSON on stdout as fatal", async () => {
  await withTransport(fault("garbage"), async (session) => {
    await session.closed;
    equal(session.errors.length, 1);
    equal(
      session.errors[0].message,
      'MCP server "fault" wrote non-JSON to stdout: "hello, not json"',
    );
    await assertGone(session.transport.pid!);
  }, { label: 'MCP server "fault"' });
});

Deno.test("StdioProcessTransport treats JSON that is not JSON-RPC as fatal", async () => {
  const code = `console.log('{"hello":"world"}');
    for await (const _ of Deno.stdin.readable) { /* until the client closes */ }`;
  await withTransport(script(code), async (session) => {
    await session.closed;
    deepEqual(session.errors.map((error) => error.message), [
      'MCP server "x" wrote a non-JSON-RPC message to stdout: "{"hello":"world"}"',
    ]);
  }, { label: 'MCP server "x"' });
});

Deno.test("StdioProcessTransport.close() kills a server that ignores stdin and SIGTERM", async () => {
  await withTransport(fault("silent"), async (session) => {
    await session.transport.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} });
    // Until the fixture has started, SIGTERM would still end it: wait for its word.
    while (session.closes === 0 && !session.transport.stderrTail.includes("ignoring SIGTERM")) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    ok(await isAlive(session.transport.pid!), "the server runs before close()");
    await session.transport.close();
    equal(session.transport.exitStatus?.signal, "SIGKILL");
    await assertGone(session.transport.pid!);
    deepEqual(session.errors, []);
    equal(session.closes, 1);
  }, { graceMs: 200 });
});

Deno.test("StdioProcessTransport.close() ends the processes the server started", async () => {
  await withTransport(fault("ok"), async (session) => {
    const answer = resultOf(await session.request(1, "tools/call", { name: "spawn" }));
    const sleepPid = Number((answer.content as { text: string }[])[0].text);
    ok(await isAlive(sleepPid), "the server's child runs before close()");
    await session.transport.close();
    await assertGone(session.transport.pid!);
    await assertGone(sleepPid);
  });
});

Deno.test("StdioProcessTransport.close() is idempotent and onclose fires once", async () => {
  await withTransport(fault("ok"), async (session) => {
    await Promise.all([session.transport.close(), session.transport.close()]);
    await session.transport.close();
    equal(session.closes, 1);
    deepEqual(session.errors, []);
    await rejects(session.transport.start(), /already started/);
  });
});

Deno.test("StdioProcessTransport.start() names a missing command or folder", async () => {
  const missing = new StdioProcessTransport({
    command: "tern-no-such-command",
    args: [],
    cwd: "/",
    env: ENV,
    label: 'MCP server "x"',
  });
  await rejects(missing.start(), {
    message: 'Cannot start MCP server "x": command "tern-no-such-command" not found',
  });
  await missing.close();
  const noCwd = new StdioProcessTransport({ ...fault("ok"), cwd: "/no/such/dir", env: ENV });
  await rejects(noCwd.start(), /: working directory "\/no\/such\/dir" not found$/);
});

Deno.test("StdioProcessTransport gives the server exactly the environment passed", async () => {
  Deno.env.set("OPENAI_API_KEY", "sk-test-not-for-children");
  try {
    const code = `console.log(JSON.stringify({
      jsonrpc: "2.0", method: "env", params: { names: Object.keys(Deno.env.toObject()).sort() },
    }));
    for await (const _ of Deno.stdin.readable) { /* until the client closes */ }`;
    await withTransport(script(code), async (session) => {
      await session.received(1);
      const message = session.messages[0];
      ok(message !== undefined && "params" in message);
      deepEqual(message.params?.names, ["HOME", "MARK", "PATH"]);
    }, { env: { ...ENV, MARK: "1" } });
  } finally {
    Deno.env.delete("OPENAI_API_KEY");
  }
});

Deno.test("StdioProcessTransport keeps only the tail of a noisy stderr", async () => {
  await withTransport(fault("stderr-noise"), async (session) => {
    await session.request(1, "initialize", INITIALIZE);
    await session.transport.close();
    const tail = session.transport.stderrTail;
    ok(tail.length <= 100);
    match(tail, /noise line 1999: x+$/);
  }, { stderrChars: 100 });
});

Deno.test("StdioProcessTransport works under the SDK Client: list and call", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "tern_mcp_stdio_" });
  const transport = new StdioProcessTransport({ ...fault("ok"), cwd, env: ENV });
  const client = new Client({ name: "tern-test", version: "0" });
  try {
    await client.connect(transport);
    deepEqual(client.getServerVersion(), { name: "fault", version: "1" });
    const { tools } = await client.listTools();
    equal(tools.find((tool) => tool.name === "echo")?.annotations?.readOnlyHint, true);
    const result = await client.callTool({ name: "echo", arguments: { message: "sdk" } });
    deepEqual(result.content, [{ type: "text", text: "echo: sdk" }]);
  } finally {
    await client.close();
    await Deno.remove(cwd, { recursive: true });
  }
  await assertGone(transport.pid!);
});

Deno.test("StdioProcessTransport lets the SDK Client refuse an unknown protocol version", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "tern_mcp_stdio_" });
  const transport = new StdioProcessTransport({ ...fault("old-protocol"), cwd, env: ENV });
  const client = new Client({ name: "tern-test", version: "0" });
  try {
    await rejects(client.connect(transport), /1999-01-01/);
  } finally {
    await client.close();
    await transport.close();
    await Deno.remove(cwd, { recursive: true });
  }
  await assertGone(transport.pid!);
});

/** Live processes as `[pid, sid, args]`, from `ps`. */
async function processTable(): Promise<[number, number, string][]> {
  const ps = await new Deno.Command("ps", { args: ["-eo", "pid=,sid=,stat=,args="] }).output();
  ok(ps.success);
  return new TextDecoder().decode(ps.stdout).split("\n")
    .map((line) => line.trim().match(/^(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/))
    .filter((found) => found !== null && !found[3].startsWith("Z"))
    .map((found) => [Number(found![1]), Number(found![2]), found![4]]);
}

bwrapTest("StdioProcessTransport.close() ends a bubblewrapped server's whole tree", async () => {
  await withBox(async (box) => {
    const server = fault("ok");
    // Deno and the fixture stay visible even from a checkout under /tmp (private inside).
    const visible = [dirname(server.command), dirname(server.args.at(-2)!)];
    const plan = await planFor(box, { source: ENV, readOnly: visible });
    const transport = new StdioProcessTransport({
      command: "bwrap",
      args: bwrapArgvFor(plan, [server.command, ...server.args]),
      cwd: box.ws,
      env: ENV,
      graceMs: 300,
    });
    const answered = Promise.withResolvers<JSONRPCMessage>();
    transport.onmessage = answered.resolve;
    transport.onclose = () =>
      answered.reject(new Error(`the server ended: ${transport.stderrTail}`));
    try {
      await transport.start();
      await transport.send({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "spawn" },
      });
      resultOf(await answered.promise);
      // bubblewrap's --new-session: the sandboxed processes share the session of the inner bwrap.
      const table = await processTable();
      const inner = table.find(([pid, , args]) =>
        pid !== transport.pid && args.includes(`--chdir ${box.ws} --`)
      );
      ok(inner !== undefined, "the sandbox's inner bwrap process runs");
      const session = () =>
        processTable().then((rows) => rows.filter(([, sid]) => sid === inner[1]));
      const sleeping = (await session()).some(([, , args]) => /(^|\/)sleep 300$/.test(args));
      ok(sleeping, "the server's sleep runs in the sandbox");
      await transport.close();
      let left = await session();
      for (let tries = 0; left.length > 0 && tries < 200; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        left = await session();
      }
      deepEqual(left, [], "sandboxed processes were left");
    } finally {
      await transport.close();
    }
  });
});

Deno.test("StdioProcessTransport fails a server whose stdout line passes the cap", async () => {
  // Written in pieces and never ended: the transport must not wait for the newline.
  const code = `const piece = new TextEncoder().encode("x".repeat(300));
    for (let i = 0; i < 10; i++) await Deno.stdout.write(piece);
    for await (const _ of Deno.stdin.readable) { /* until the client closes */ }`;
  await withTransport(script(code), async (session) => {
    await session.closed;
    deepEqual(session.errors.map((error) => error.message), [
      `MCP server "x" wrote a stdout line longer than 1000 characters: "${"x".repeat(200)}"`,
    ]);
    await assertGone(session.transport.pid!);
  }, { label: 'MCP server "x"', maxLineChars: 1000 });
});

Deno.test("StdioProcessTransport caps a stdout line at 16 MiB by default", async () => {
  const code = `await Deno.stdout.write(new TextEncoder().encode("y".repeat(17 * 1024 * 1024)));
    for await (const _ of Deno.stdin.readable) { /* until the client closes */ }`;
  await withTransport(script(code), async (session) => {
    await session.closed;
    equal(session.errors.length, 1);
    match(
      session.errors[0].message,
      /wrote a stdout line longer than 16777216 characters: "y{200}"$/,
    );
  }, { label: 'MCP server "x"' });
});
