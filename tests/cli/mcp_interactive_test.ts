/**
 * MCP in the interactive session (line mode: stdin and stdout are pipes): /mcp lists the
 * servers, /mcp trust starts a project server, and a turn uses an MCP tool.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { withScriptedServer } from "../support/scripted_server.ts";
import { runTern, runTernWithInput, tempWorkspace } from "../support/tern_process.ts";
import { faultServerCommand } from "../fixtures/mcp/fault_server.ts";

/** The environment of a line-mode run against the scripted server at `baseUrl`. */
function lineEnv(home: string, ternHome: string, baseUrl: string): Record<string, string> {
  return {
    HOME: home,
    TERN_HOME: ternHome,
    TERN_BASE_URL: baseUrl,
    TERN_MODEL: "scripted-model",
    TERN_API_KEY: "sk-mcp-line-secret",
    NO_COLOR: "1",
  };
}

Deno.test("interactive: /mcp lists servers, /mcp trust starts one, a turn calls its tool", async () => {
  const ws = await tempWorkspace();
  try {
    const ternHome = join(ws.home, ".tern");
    await Deno.mkdir(ternHome);
    await Deno.writeTextFile(
      join(ternHome, "mcp.json"),
      JSON.stringify({ servers: { mine: faultServerCommand("ok") } }),
    );
    await Deno.writeTextFile(
      join(ws.dir, ".mcp.json"),
      JSON.stringify({ mcpServers: { theirs: faultServerCommand("ok", { workspace: ws.dir }) } }),
    );
    await withScriptedServer(
      [
        { toolCalls: [{ id: "c1", name: "mcp__theirs__echo", arguments: '{"message":"hey"}' }] },
        { text: "It said hey." },
      ],
      async (server) => {
        const env = lineEnv(ws.home, ternHome, server.baseUrl);
        const input = ["/mcp", "/mcp trust theirs", "/mcp tools theirs", "say hey"].join("\n");
        // A project server's tools are never read-only by its own word (its sandbox may write):
        // the turn's call needs a decision, here bypass mode's.
        const run = await runTernWithInput(["--mode", "bypass"], `${input}\n`, {
          cwd: ws.dir,
          env,
        });
        equal(run.code, 0, run.stderr);
        const out = run.stdout;
        match(out, /do not start until you trust them: \/mcp shows what they run/);
        const listing = out.slice(out.indexOf("› /mcp\n"), out.indexOf("› /mcp trust"));
        // The user's server starts behind the prompt: READY, or STARTING still.
        match(listing, /mine (READY \d+ tools|STARTING) stdio · user/);
        match(
          listing,
          /theirs UNTRUSTED stdio · project\n {4}runs .*fault_server\.ts ok .*\/mcp trust theirs/,
        );
        match(out, /trusted theirs: [\s\S]*fault_server\.ts ok/);
        match(out, /theirs READY \d+ tools/);
        match(out, /mcp__theirs__echo {2}Echoes/);
        ok(out.includes("It said hey."), out);
        const results = server.requests[1].modelRequest.messages.filter((m) => m.role === "tool");
        match(String(results[0].content), /SUCCEEDED\necho: hey/);
      },
    );
  } finally {
    await ws.cleanup();
  }
});

Deno.test("${VAR} in an MCP definition needs TERN_EXTRA_ENV when tern may not read VAR", async () => {
  const ws = await tempWorkspace();
  try {
    await Deno.writeTextFile(
      join(ws.home, "mcp.json"),
      JSON.stringify({
        servers: { fault: { ...faultServerCommand("ok"), env: { TOKEN: "${MY_MCP_TOKEN}" } } },
      }),
    );
    const env = { HOME: ws.home, TERN_HOME: ws.home, MY_MCP_TOKEN: "tok-123" };
    const denied = await runTern(["mcp", "list"], { cwd: ws.dir, env });
    equal(denied.code, 0, denied.stderr);
    match(denied.stderr, /servers\.fault\.env\.TOKEN.*\$\{MY_MCP_TOKEN\}.*TERN_EXTRA_ENV/);
    match(denied.stderr, /server "fault" is not used/);
    const allowed = await runTern(["mcp", "list"], {
      cwd: ws.dir,
      env: { ...env, TERN_EXTRA_ENV: "MY_MCP_TOKEN" },
    });
    equal(allowed.code, 0, allowed.stderr);
    match(allowed.stdout, /^fault\s+READY/m);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("interactive: /mcp trust refuses a project server whose file changed since the session read it", async () => {
  const ws = await tempWorkspace();
  try {
    const ternHome = join(ws.home, ".tern");
    await Deno.mkdir(ternHome);
    await Deno.writeTextFile(
      join(ws.dir, ".mcp.json"),
      JSON.stringify({ mcpServers: { theirs: faultServerCommand("ok", { workspace: ws.dir }) } }),
    );
    // The model changes the server's script after the session read (and showed) it.
    const change = JSON.stringify({ command: "echo '// changed' >> fault_server.ts" });
    await withScriptedServer(
      [{ toolCalls: [{ id: "c1", name: "bash", arguments: change }] }, { text: "Changed." }],
      async (server) => {
        const env = lineEnv(ws.home, ternHome, server.baseUrl);
        const input = ["/mcp", "tidy up", "/mcp trust theirs", "/mcp"].join("\n");
        const run = await runTernWithInput(["--mode", "bypass"], `${input}\n`, {
          cwd: ws.dir,
          env,
        });
        ok(run.stdout.includes("Changed."), run.stdout);
        equal(run.code, 2, run.stderr);
        match(
          run.stdout + run.stderr,
          /Cannot trust MCP server "theirs": "fault_server\.ts" changed since this session read it/,
        );
        ok(!/theirs READY/.test(run.stdout), run.stdout);
        ok(!(await Deno.stat(join(ternHome, "mcp-trust.json")).then(() => true, () => false)));
      },
    );
  } finally {
    await ws.cleanup();
  }
});

Deno.test("interactive: /mcp says why a project server can never be trusted, and /mcp trust refuses it", async () => {
  const ws = await tempWorkspace();
  try {
    const ternHome = join(ws.home, ".tern");
    await Deno.mkdir(ternHome);
    // Code given as text names no file to pin: such a server can never be trusted.
    await Deno.writeTextFile(
      join(ws.dir, ".mcp.json"),
      JSON.stringify({ mcpServers: { theirs: { command: "bash", args: ["-c", "exit 0"] } } }),
    );
    await withScriptedServer([{ text: "unused" }], async (server) => {
      const env = lineEnv(ws.home, ternHome, server.baseUrl);
      const run = await runTernWithInput(["--mode", "bypass"], "/mcp\n/mcp trust theirs\n", {
        cwd: ws.dir,
        env,
      });
      // Lines are wrapped to the terminal's width: read as one.
      const shown = (run.stdout + run.stderr).replace(/\s+/g, " ");
      match(shown, /tern cannot trust this project server: "the command line" cannot be pinned/);
      ok(!/: \/mcp trust theirs/.test(shown), shown);
      // The notice at start says why it cannot start, and suggests no command that is refused.
      match(shown, /The project's MCP server "theirs" cannot start: tern cannot trust this/);
      ok(!/do not start until you trust them/.test(shown), shown);
      match(
        shown,
        /Cannot trust MCP server "theirs": "the command line" cannot be pinned .*; nothing trusted/,
      );
      ok(!(await Deno.stat(join(ternHome, "mcp-trust.json")).then(() => true, () => false)));
    });
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern mcp call and tern mcp trust suggest no trust for a server tern can never trust", async () => {
  const ws = await tempWorkspace();
  try {
    const ternHome = join(ws.home, ".tern");
    await Deno.writeTextFile(
      join(ws.dir, ".mcp.json"),
      JSON.stringify({ mcpServers: { theirs: { command: "bash", args: ["-c", "exit 0"] } } }),
    );
    const env = { HOME: ws.home, TERN_HOME: ternHome, NO_COLOR: "1" };
    const call = await runTern(["mcp", "call", "theirs", "echo", "{}"], { cwd: ws.dir, env });
    equal(call.code, 2, call.stderr);
    match(call.stderr, /"theirs" .*cannot start: tern cannot trust this project server: "the/);
    ok(!/tern mcp trust theirs/.test(call.stderr), call.stderr);
    const list = await runTern(["mcp", "trust"], { cwd: ws.dir, env });
    equal(list.code, 0, list.stderr);
    match(list.stdout, /theirs: .*\(tern cannot trust it: "the command line" cannot be pinned/);
  } finally {
    await ws.cleanup();
  }
});
