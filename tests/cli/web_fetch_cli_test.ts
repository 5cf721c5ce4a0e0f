/**
 * web_fetch through the real `tern run` (the launcher's permissions, the gate, the request
 * process): under :external a fetch reaches the request process, whose guard (never relaxed
 * there) refuses a server on 127.0.0.1; under :workspace with --mode bypass nothing is sent.
 */
import { equal, match } from "node:assert/strict";
import { join } from "node:path";
import { ROOT, tempWorkspace } from "../support/tern_process.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

const decoder = new TextDecoder();

async function runFetch(profile: string, url: string): Promise<string> {
  let round = 0;
  const server = await startScriptedServer(() =>
    round++ === 0
      ? { toolCalls: [{ id: "c0", name: "web_fetch", arguments: JSON.stringify({ url }) }] }
      : { text: "done" }
  );
  const ws = await tempWorkspace();
  try {
    const out = await new Deno.Command(join(ROOT, "bin/tern"), {
      args: ["run", "--base-url", server.baseUrl, "--mode", "bypass", "--profile", profile, "hi"],
      cwd: ws.dir,
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: ws.home, TERN_HOME: ws.home },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    equal(out.code, 0, decoder.decode(out.stderr));
    equal(server.requests.length, 2);
    const tool = server.requests[1].modelRequest.messages.at(-1)!;
    return JSON.stringify(tool);
  } finally {
    await server.close();
    await ws.cleanup();
  }
}

testWith(
  [bwrapNeed],
  "tern run: web_fetch of a local server is refused by the request process's guard",
  async () => {
    let hits = 0;
    const target = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
      hits++;
      return new Response("private");
    });
    try {
      const url = `http://127.0.0.1:${target.addr.port}/admin`;
      const external = await runFetch(":external", url);
      match(external, /POLICY_DENIED/);
      match(external, /loopback \(127\.0\.0\.0\/8\); the web tools reach public addresses only/);
      const workspace = await runFetch(":workspace", url);
      match(workspace, /has no network, and --mode bypass grants nothing/);
      equal(hits, 0);
    } finally {
      await target.shutdown();
    }
  },
);
