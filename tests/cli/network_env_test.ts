/**
 * Proxy and CA variables reach what needs the network: MCP stdio servers and shell commands
 * that have the network (`:external`); never commands without it. The real `tern` process.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { NETWORK_ENV_NAMES } from "../../src/sandbox/shell_env.ts";
import { faultServerCommand } from "../fixtures/mcp/fault_server.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { declaredFlags, runTern, tempWorkspace } from "../support/tern_process.ts";

const KEY = "sk-test-NETENV-4f3e2d1c0b";

/**
 * Some of the variables, in upper and lower case. tern's own requests honour them too, so the
 * CA files are real ones (the system's bundle when there is one) and the proxy is for https only
 * (the scripted model is plain http on 127.0.0.1).
 */
const CA_FILE = ["/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/cert.pem"].find(exists) ??
  new URL(import.meta.url).pathname;
const PROXY_ENV: Record<string, string> = {
  HTTPS_PROXY: "http://proxy.corp.example:3128",
  no_proxy: "localhost,.corp.example",
  NODE_EXTRA_CA_CERTS: CA_FILE,
  SSL_CERT_FILE: CA_FILE,
  SSL_CERT_DIR: "/etc/ssl/certs",
};

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

Deno.test("the launcher lets tern read every proxy and CA variable it passes on", () => {
  const allowEnv = declaredFlags().find((flag) => flag.startsWith("--allow-env="))!;
  const names = allowEnv.slice("--allow-env=".length).split(",");
  deepEqual(NETWORK_ENV_NAMES.filter((name) => !names.includes(name)), []);
});

testWith(
  [bwrapNeed],
  "shell commands get the proxy and CA variables only when they have the network",
  async () => {
    const ws = await tempWorkspace();
    try {
      const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: KEY, ...PROXY_ENV };
      const command =
        'echo "[$HTTPS_PROXY|$no_proxy|$NODE_EXTRA_CA_CERTS|$SSL_CERT_FILE|$SSL_CERT_DIR]"';
      const seen = async (profile: string) => {
        const results: string[] = [];
        const server = await startScriptedServer(
          ((request: ModelRequest, i: number) => {
            if (i === 0) {
              return {
                toolCalls: [{ id: "b1", name: "bash", arguments: JSON.stringify({ command }) }],
              };
            }
            const last = request.messages.at(-1);
            results.push(last?.role === "tool" ? last.content : "");
            return { text: "done" };
          }) as unknown as ScriptedReply[],
          { chunkDelayMs: 0 },
        );
        try {
          const run = await runTern(
            [
              "run",
              "--base-url",
              server.baseUrl,
              "-m",
              "scripted",
              "--profile",
              profile,
              "--mode",
              "bypass",
              "go",
            ],
            { cwd: ws.dir, env },
          );
          equal(run.code, 0, run.stderr);
          return results.join("\n");
        } finally {
          await server.close();
        }
      };
      const values = Object.values(PROXY_ENV).join("|");
      match(
        await seen(":external"),
        new RegExp(`\\[${values.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\]`),
      );
      match(await seen(":workspace"), /\[\|\|\|\|\]/);
    } finally {
      await ws.cleanup();
    }
  },
);

Deno.test("an MCP stdio server gets the person's proxy and CA variables, never a key", async () => {
  const ws = await tempWorkspace();
  try {
    const out = join(ws.dir, "server-env.txt");
    const server = faultServerCommand("ok");
    // The server writes the environment it got, then serves as the fixture does.
    const script = `env > "${out}"; exec "$0" "$@"`;
    await Deno.writeTextFile(
      join(ws.home, "mcp.json"),
      JSON.stringify({
        servers: { probe: { command: "sh", args: ["-c", script, server.command, ...server.args] } },
      }),
    );
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: KEY, ...PROXY_ENV };
    const list = await runTern(["mcp", "list"], { cwd: ws.dir, env });
    equal(list.code, 0, list.stderr);
    match(list.stdout, /^probe\s+READY/m);
    const seen = Object.fromEntries(
      (await Deno.readTextFile(out)).trim().split("\n").map((line) => {
        const at = line.indexOf("=");
        return [line.slice(0, at), line.slice(at + 1)];
      }),
    );
    for (const [name, value] of Object.entries(PROXY_ENV)) equal(seen[name], value, name);
    ok(!Object.values(seen).includes(KEY), "the key never reaches a server");
  } finally {
    await ws.cleanup();
  }
});
