/**
 * A server that sends `notifications/tools/list_changed` without end cannot make tern list its
 * tools without bound: listings are at least `MIN_REFRESH_INTERVAL_MS` apart, a listing that
 * holds what the last one did tells nobody, and a change the server makes inside the storm is
 * still read. A real stdio server (raw JSON-RPC lines), the SDK's client.
 */
import { equal, ok } from "node:assert/strict";
import { MIN_REFRESH_INTERVAL_MS } from "../../src/mcp/connection.ts";
import { stdioServer, withManager } from "./_servers.ts";

/**
 * The server: lists `echo` (and `added`, once a second has passed), and from
 * `notifications/initialized` on sends `list_changed` in bursts of 20 every 5 ms (about 4,000 a second, under the flood bound), or one 310 ms
 * after each listing (`paced`: past the SDK's 300 ms debounce). Its `echo` answers how many
 * listings it served.
 */
function stormServer(mode: "burst" | "paced") {
  const code = `
    const encoder = new TextEncoder();
    const write = (message) =>
      Deno.stdout.writeSync(encoder.encode(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\\n"));
    const born = Date.now();
    let lists = 0;
    const changed = () => write({ method: "notifications/tools/list_changed" });
    const tool = (name) => ({ name, inputSchema: { type: "object", properties: {} } });
    let buffer = "";
    for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      let end;
      while ((end = buffer.indexOf("\\n")) >= 0) {
        const request = JSON.parse(buffer.slice(0, end));
        buffer = buffer.slice(end + 1);
        if (request.method === "notifications/initialized" && ${JSON.stringify(mode)} === "burst") {
          setInterval(() => { for (let i = 0; i < 20; i++) changed(); }, 5);
        }
        if (request.id === undefined) continue;
        let result;
        if (request.method === "initialize") {
          result = {
            protocolVersion: "2025-06-18",
            capabilities: { tools: { listChanged: true } },
            serverInfo: { name: "storm", version: "1" },
          };
        } else if (request.method === "tools/list") {
          lists++;
          const names = Date.now() - born > 1000 ? ["echo", "added"] : ["echo"];
          result = { tools: names.map(tool) };
          if (${JSON.stringify(mode)} === "paced") setTimeout(changed, 310);
        } else if (request.method === "tools/call") {
          result = { content: [{ type: "text", text: "lists " + lists }] };
        } else {
          result = {};
        }
        write({ id: request.id, result });
      }
    }
  `;
  return stdioServer(mode, { command: Deno.execPath(), args: ["eval", "--no-config", code] });
}

async function listings(mode: "burst" | "paced", seconds: number) {
  let changes = 0;
  let listed = 0;
  let added = false;
  await withManager([stormServer(mode)], async (manager) => {
    manager.onChange(() => {
      changes++;
      if (manager.tool(`mcp__${mode}__added`)) added = true;
    });
    manager.start();
    await manager.settled();
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const signal = new AbortController().signal;
    const stats = await manager.tool(`mcp__${mode}__echo`)!.run({}, { signal });
    equal(stats.status, "SUCCEEDED", JSON.stringify(stats));
    if (stats.status === "SUCCEEDED") listed = Number(/lists (\d+)/.exec(stats.output)?.[1]);
    equal(manager.status()[0].state, "READY");
  });
  return { changes, listed, added };
}

Deno.test("a server storming list_changed is listed at most once per interval, and its change is read", async () => {
  const seconds = 4;
  const { listed, added, changes } = await listings("burst", seconds);
  const most = Math.ceil((seconds * 1000) / MIN_REFRESH_INTERVAL_MS) + 2;
  ok(listed >= 2 && listed <= most, `${listed} listings in ${seconds} s`);
  // The tool it added inside the storm reached tern.
  ok(added, "the added tool was read");
  // Its listing changed once (echo, then echo and added); the same listing tells nobody.
  ok(changes <= 4, `${changes} changes told`);
});

Deno.test("a server asking for a new listing after each one is listed at most once per interval", async () => {
  const seconds = 4;
  const { listed, changes } = await listings("paced", seconds);
  const most = Math.ceil((seconds * 1000) / MIN_REFRESH_INTERVAL_MS) + 2;
  ok(listed <= most, `${listed} listings in ${seconds} s`);
  ok(changes <= 4, `${changes} changes told`);
});
