/**
 * Whatever is wrong with one of a project's MCP files (a folder where a file should be, a
 * folder that cannot be listed, nesting thousands deep) costs only that file's servers, with a
 * warning naming the file and what is wrong: the person's own servers keep working. A file of the
 * person's own nested that deep is a ConfigError naming it, never an internal error.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { loadError, type McpConfigFixture, withMcpConfig } from "./_config_fixture.ts";

const USER = "home/.tern/mcp.json";
const OWN = `{ "servers": { "own": { "command": "mine" } } }`;

/** `{"mcpServers": [[[…]]]}`, nested `depth` deep in all. */
function nested(depth: number): string {
  return `{"mcpServers": ${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;
}

/** Loads as a front end does (problems are warnings): the servers' names and the warnings. */
async function loadWarned(fixture: McpConfigFixture) {
  const { servers, warnings } = await fixture.loadWarned();
  return { names: servers.map((server) => server.name), warnings };
}

Deno.test("loadMcpConfig() skips a project file nested 20,000 deep, naming it, and keeps the person's servers", async () => {
  await withMcpConfig(async (fixture) => {
    fixture.write(USER, OWN);
    const file = fixture.write("ws/.mcp.json", nested(20_000));
    const { names, warnings } = await loadWarned(fixture);
    assert.deepEqual(names, ["own"]);
    assert.deepEqual(warnings, [
      `Invalid MCP config "${file}": line 1, column 79: nested more than 64 levels deep — an ` +
      "MCP config needs no more than a few — its servers are not used",
    ]);
    // Without anyone to tell, it is a ConfigError naming the file (exit code 2).
    const error = await loadError(fixture);
    assert.equal(error.file, file);
    assert.match(error.message, /nested more than 64 levels deep/);
  });
});

Deno.test("loadMcpConfig() takes a file nested 64 deep and refuses one nested 65 deep", async () => {
  await withMcpConfig(async (fixture) => {
    const server = (inner: string) =>
      `{ "mcpServers": { "s": { "command": "x", "other": ${inner} } } }`;
    // Three levels above `other`: the top, mcpServers and the server.
    fixture.write("ws/.mcp.json", server(`${"[".repeat(61)}${"]".repeat(61)}`));
    assert.deepEqual(await loadWarned(fixture), { names: ["s"], warnings: [] });
    fixture.write("ws/.mcp.json", server(`${"[".repeat(62)}${"]".repeat(62)}`));
    const { names, warnings } = await loadWarned(fixture);
    assert.deepEqual(names, []);
    assert.match(warnings[0], /nested more than 64 levels deep/);
  });
});

Deno.test("loadMcpConfig() skips a project MCP file that is a folder, naming it, and keeps the person's servers", async () => {
  await withMcpConfig(async (fixture) => {
    fixture.write(USER, OWN);
    const mcpJson = join(fixture.workspace, ".mcp.json");
    const ternJson = join(fixture.workspace, ".tern", "mcp.json");
    Deno.mkdirSync(mcpJson);
    Deno.mkdirSync(ternJson, { recursive: true });
    fixture.write("ws/.tern/mcp/a.json", `{ "servers": { "theirs": { "command": "x" } } }`);
    const { names, warnings } = await loadWarned(fixture);
    assert.deepEqual(names, ["own", "theirs"]);
    assert.deepEqual(warnings, [
      `Cannot read MCP config "${mcpJson}": is a directory — its servers are not used`,
      `Cannot read MCP config "${ternJson}": is a directory — its servers are not used`,
    ]);
    assert.equal((await loadError(fixture)).file, mcpJson);
  });
});

Deno.test("loadMcpConfig() skips a project MCP folder that cannot be listed, naming it, and keeps the other servers", async () => {
  await withMcpConfig(async (fixture) => {
    fixture.write(USER, OWN);
    fixture.write("ws/.mcp.json", `{ "mcpServers": { "theirs": { "command": "x" } } }`);
    const folder = join(fixture.workspace, ".tern", "mcp");
    Deno.mkdirSync(join(fixture.workspace, ".tern"));
    // A link to itself: listing it fails with "too many levels of symbolic links".
    Deno.symlinkSync("mcp", folder);
    const { names, warnings } = await loadWarned(fixture);
    assert.deepEqual(names, ["own", "theirs"]);
    assert.equal(warnings.length, 1, warnings.join("\n"));
    assert.match(
      warnings[0],
      new RegExp(`^Cannot read MCP config folder "${folder}": .+ — its servers are not used$`),
    );
  });
});

Deno.test("loadMcpConfig() rejects a file of the person's own nested 20,000 deep as a ConfigError naming it", async () => {
  await withMcpConfig(async (fixture) => {
    const file = fixture.write(USER, nested(20_000));
    const error = await loadError(fixture);
    assert.equal(error.file, file);
    assert.equal(error.line, 1);
    assert.match(error.message, /^Invalid MCP config ".*": line 1, column 79: nested more than 64/);
  });
});

Deno.test("tern mcp list: bad project MCP files cost only their servers, and a bad own file exits 2", async () => {
  const ws = await tempWorkspace();
  try {
    await Deno.writeTextFile(
      join(ws.home, "mcp.json"),
      `{ "servers": { "own": { "command": "mine", "enabled": false } } }`,
    );
    await Deno.writeTextFile(join(ws.dir, ".mcp.json"), nested(20_000));
    await Deno.mkdir(join(ws.dir, ".tern", "mcp.json"), { recursive: true });
    const env = { HOME: ws.home, TERN_HOME: ws.home };
    const listed = await runTern(["mcp", "list"], { cwd: ws.dir, env });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^own\s+DISABLED/m);
    assert.match(listed.stderr, /\.mcp\.json": line 1, column 79: nested more than 64 levels/);
    assert.match(listed.stderr, /mcp\.json": is a directory — its servers are not used/);

    await Deno.writeTextFile(join(ws.home, "mcp.json"), nested(20_000));
    const own = await runTern(["mcp", "list"], { cwd: ws.dir, env });
    assert.equal(own.code, 2, own.stderr);
    assert.match(own.stderr, /^tern: Invalid MCP config ".*": line 1, column 79: nested more/m);
    assert.doesNotMatch(own.stderr, /internal error/);
  } finally {
    await ws.cleanup();
  }
});
