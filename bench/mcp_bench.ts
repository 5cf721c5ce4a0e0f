/**
 * MCP client costs: time from `start()` to READY (spawn, initialize, tools/list) and the round
 * trip of one tool call through tern's adapter (schema check, SDK client, our stdio transport),
 * against the fault fixture (a small Deno server) and the reference server-everything.
 * Writes bench/results/mcp.md.
 *
 *   deno run -A bench/mcp_bench.ts [starts] [calls]
 */
import { McpManager } from "../src/mcp/manager.ts";
import type { McpServerConfig } from "../src/mcp/types.ts";
import { denoNpm, EVERYTHING, faultServer, stdioServer, testEnv } from "../tests/mcp/_servers.ts";
import { type Stats, stats } from "./_stats.ts";

const STARTS = Number(Deno.args[0] ?? 10);
const CALLS = Number(Deno.args[1] ?? 300);

interface Row {
  server: string;
  start: Stats;
  call: Stats;
}

async function measure(name: string, config: McpServerConfig, tool: string, args: unknown) {
  const starts: number[] = [];
  const calls: number[] = [];
  const signal = new AbortController().signal;
  for (let i = 0; i < STARTS; i++) {
    const manager = new McpManager({
      servers: [config],
      trusted: () => true,
      workspace: Deno.cwd(),
      clientVersion: "bench",
      baseEnv: testEnv(),
    });
    try {
      const began = performance.now();
      manager.start();
      await manager.settled();
      starts.push(performance.now() - began);
      const status = manager.status()[0];
      if (status.state !== "READY") throw new Error(`${name}: ${status.error}`);
      if (i > 0) continue;
      const adapted = manager.tools().find((t) => t.tool === tool)!;
      for (let j = 0; j < CALLS; j++) {
        const t0 = performance.now();
        const obs = await adapted.run(args, { signal });
        calls.push(performance.now() - t0);
        if (obs.status !== "SUCCEEDED") throw new Error(`${name}: ${JSON.stringify(obs)}`);
      }
    } finally {
      await manager.close();
    }
  }
  return { server: name, start: stats(starts), call: stats(calls) };
}

const rows: Row[] = [
  await measure("fault fixture (Deno, hand-written)", faultServer("fault", "ok"), "echo", {
    message: "hi",
  }),
  await measure(
    "server-everything 2026.8.31 (Deno)",
    stdioServer("everything", denoNpm(EVERYTHING, "stdio")),
    "echo",
    { message: "hi" },
  ),
];

const fmt = (s: Stats) => `${s.median} ms (p90 ${s.p90}, min ${s.min}, n ${s.n})`;
const report = [
  "# MCP client",
  "",
  `Measured ${
    new Date().toISOString().slice(0, 10)
  } with \`deno run -A bench/mcp_bench.ts ${STARTS} ${CALLS}\``,
  "on this machine (2 cores, shared). start = `start()` to READY: spawn over stdio, `initialize`,",
  "`notifications/initialized`, `tools/list`. call = one `echo` through the tool adapter (Ajv",
  "argument check, SDK client, our stdio transport, the server, back to an Observation).",
  "",
  "| server | start → READY (median) | one call (median) |",
  "|---|---|---|",
  ...rows.map((r) => `| ${r.server} | ${fmt(r.start)} | ${fmt(r.call)} |`),
  "",
].join("\n");
await Deno.writeTextFile(new URL("./results/mcp.md", import.meta.url), report);
console.log(report);
