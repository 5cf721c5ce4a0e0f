/**
 * A sandboxed MCP server sees the workspace as commands do: what the person's deny rules with a
 * path keep from reading is hidden from it too, and what they keep from writing is read-only.
 * The npm reference filesystem server, in real bubblewrap, through `openMcp()`.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { openMcp } from "../../src/harness/mcp_setup.ts";
import { denoNpm, FILESYSTEM, referenceServersNeed } from "./_servers.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

const SECRET = "MCP-DENIED-5e2a";

testWith(
  [referenceServersNeed, bwrapNeed],
  "a sandboxed MCP server cannot read or write what the person's deny rules keep",
  async () => {
    const root = await Deno.realPath(
      await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_mcp_deny_" }),
    );
    const ws = join(root, "ws");
    const ternHome = join(root, "home", ".tern");
    try {
      await Deno.mkdir(join(ws, "secrets"), { recursive: true });
      await Deno.mkdir(ternHome, { recursive: true });
      await Deno.writeTextFile(join(ws, "secrets/key.txt"), `${SECRET}\n`);
      await Deno.writeTextFile(join(ws, ".env"), `TOKEN=${SECRET}\n`);
      await Deno.writeTextFile(join(ws, "package.json"), '{"name": "app"}\n');
      await Deno.writeTextFile(join(ws, "main.ts"), "console.log(1);\n");
      const server = denoNpm(FILESYSTEM, ws);
      await Deno.writeTextFile(
        join(ternHome, "mcp.json"),
        JSON.stringify({ servers: { fs: { ...server, sandbox: true } } }),
      );
      const rules = [
        { action: "deny" as const, path: "secrets/**" },
        { action: "deny" as const, path: ".env" },
        { action: "deny" as const, tool: "write", path: "package.json" },
      ];
      const { manager } = await openMcp({ ternHome, workspace: ws, rules, env: () => undefined });
      ok(manager !== undefined);
      try {
        manager.start();
        await manager.settled();
        equal(manager.status()[0].state, "READY", manager.status()[0].error);
        const call = async (tool: string, args: Record<string, unknown>) => {
          const result = await manager.tool(`mcp__fs__${tool}`)!.run(args, {
            signal: new AbortController().signal,
          });
          return result.status === "ERROR" ? result.message : result.output;
        };
        const read = await call("read_multiple_files", {
          paths: [join(ws, "secrets/key.txt"), join(ws, ".env"), join(ws, "main.ts")],
        });
        ok(!read.includes(SECRET), read);
        ok(read.includes("console.log"), read);
        const search = await call("search_files", { path: ws, pattern: "key" });
        ok(!search.includes("key.txt"), search);
        await call("write_file", { path: join(ws, "package.json"), content: "{}" });
        equal(await Deno.readTextFile(join(ws, "package.json")), '{"name": "app"}\n');
      } finally {
        await manager.close();
      }
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
);
