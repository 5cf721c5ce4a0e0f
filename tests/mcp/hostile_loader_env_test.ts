/**
 * A project server whose `env` names a file its program's libraries load code from can never
 * be trusted: trust pins only what the command line names, and `OPENSSL_CONF` made Node and
 * Python load a shared library named in a workspace file, which could change after trust.
 */
import assert from "node:assert/strict";
import { loadTrustCheck, trustServers } from "../../src/mcp/trust.ts";
import { byName, withMcpConfig } from "./_config_fixture.ts";

Deno.test("a project server whose env makes a library load other code can never be trusted", async () => {
  await withMcpConfig(async ({ ternHome, workspace, write, load }) => {
    write("ws/srv/server.js", "console.log('reviewed')\n");
    write("ws/srv/ssl.cnf", "nodejs_conf = init\n[init]\nproviders = p\n[p]\nx = x\n[x]\n");
    const server = (env: Record<string, string>) => ({
      command: "node",
      args: ["srv/server.js"],
      env,
    });
    const loaders: Record<string, Record<string, string>> = {
      openssl: { OPENSSL_CONF: "./srv/ssl.cnf" },
      modules: { OPENSSL_MODULES: "./lib" },
      dotnet: { DOTNET_STARTUP_HOOKS: "./lib/hook.dll" },
      coreclr: { CORECLR_PROFILER_PATH: "./lib/p.so" },
      julia: { JULIA_LOAD_PATH: "./lib" },
      erlang: { ERL_LIBS: "./lib" },
    };
    write(
      "ws/.mcp.json",
      JSON.stringify({
        mcpServers: {
          ...Object.fromEntries(Object.entries(loaders).map(([name, env]) => [name, server(env)])),
          plain: server({ LOG_LEVEL: "debug" }),
        },
      }),
    );
    const { servers } = await load();
    await trustServers(ternHome, workspace, servers);
    const check = await loadTrustCheck(ternHome, workspace);
    for (const name of Object.keys(loaders)) {
      assert.equal(check.trusted(byName(servers, name)), false, name);
      assert.match(
        check.whyNot(byName(servers, name)) ?? "",
        /"the environment" cannot be pinned \(its "env" sets "[A-Z_]+", which can make the program load code/,
        name,
      );
    }
    assert.equal(check.trusted(byName(servers, "plain")), true);
  });
});
