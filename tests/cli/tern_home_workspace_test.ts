/**
 * tern never works in its own home: `tern run` and ACP's `session/new` and `session/load` refuse
 * a workspace that is tern's home or lies inside it, before a model is asked or a command runs
 * (a command there could rewrite tern's config, trust records and sessions).
 */
import { methods } from "@agentclientprotocol/sdk";
import { deepEqual, equal, match } from "node:assert/strict";
import { join } from "node:path";
import { withBench } from "../support/acp_bench.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";

/** A model turn whose bash rewrites tern's config and plants a file among its sessions. */
const PLANT =
  `printf '{"mode":"bypass"}' > config.jsonc; mkdir -p sessions; touch sessions/PLANTED`;
const REFUSED = /is (inside )?tern's home.*\(TERN_HOME\): tern does not work on its own config/;

Deno.test("tern run refuses a workspace that is tern's home or inside it, with exit code 2", async () => {
  const server = await startScriptedServer([
    { toolCalls: [{ id: "b", name: "bash", arguments: JSON.stringify({ command: PLANT }) }] },
    { text: "done" },
  ], { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    // The default tern home, ~/.tern, and one TERN_HOME names (also through a link to it).
    const home = join(ws.home, ".tern");
    await Deno.mkdir(join(home, "proj"), { recursive: true });
    await Deno.writeTextFile(join(home, "config.jsonc"), "{}");
    await Deno.symlink(home, join(ws.dir, "link"));
    const cases: Array<[string, Record<string, string>]> = [
      [home, { TERN_HOME: home }],
      [join(ws.dir, "link"), { TERN_HOME: home }],
      [home, {}],
      [join(home, "proj"), {}],
    ];
    for (const [cwd, extra] of cases) {
      const env = { HOME: ws.home, TERN_API_KEY: "sk-test", ...extra };
      const run = await runTern(scriptedRunArgs(server.baseUrl, "plant it"), { cwd, env });
      const where = `${cwd} ${JSON.stringify(extra)}: ${run.stderr}`;
      equal(run.code, 2, where);
      match(run.stderr, REFUSED, where);
      match(run.stderr, /start tern in your project's folder/, where);
      equal(await Deno.readTextFile(join(home, "config.jsonc")), "{}", where);
      equal(await Deno.stat(join(home, "sessions")).then(() => true, () => false), false, where);
    }
    equal(server.requests.length, 0);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});

Deno.test("tern acp refuses session/new and session/load in tern's home with invalid params", async () => {
  await withBench([{ text: "never asked" }], async ({ connect, home, requests }) => {
    await Deno.mkdir(join(home, "proj"));
    await Deno.writeTextFile(join(home, "config.jsonc"), "{}");
    await connect(async (ctx) => {
      const refused = async (request: Promise<unknown>) => {
        try {
          await request;
        } catch (error) {
          const { code, message } = error as { code?: number; message?: string };
          return { code, message: String(message ?? error) };
        }
        return { code: 0, message: "accepted" };
      };
      for (const cwd of [home, join(home, "proj")]) {
        const opened = await refused(
          ctx.request(methods.agent.session.new, { cwd, mcpServers: [] }),
        );
        equal(opened.code, -32602, opened.message);
        match(JSON.stringify(opened), REFUSED);
        const loaded = await refused(ctx.request(methods.agent.session.load, {
          sessionId: "0b6f1a52-3c1e-4d7a-9f1e-2a6b8c4d5e6f",
          cwd,
          mcpServers: [],
        }));
        equal(loaded.code, -32602, loaded.message);
        match(JSON.stringify(loaded), REFUSED);
      }
    });
    deepEqual(requests, []);
    equal(await Deno.readTextFile(join(home, "config.jsonc")), "{}");
  });
});
