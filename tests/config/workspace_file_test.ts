/**
 * The files tern reads itself from a workspace (AGENTS.md, .env, .tern/config.jsonc, MCP files)
 * are read as a tool would read them, whoever made them: only regular files inside the
 * workspace, never through a symlink out of it, never a hard link. Each case plays the
 * repository (or a command the model ran) trying to make tern read the person's own files.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { readProjectRules } from "../../src/agent/system_prompt.ts";
import { loadConfig } from "../../src/config/load.ts";
import { readWorkspaceText } from "../../src/config/workspace_file.ts";
import { loadMcpConfig } from "../../src/mcp/config.ts";

const SECRET = "sk-person-SECRET-5f1c9e02aa";

interface Scene {
  /** The workspace (a real path). */
  ws: string;
  /** A folder outside the workspace holding the person's own files. */
  outside: string;
  /** Stands in for HOME (its .tern is tern's home). */
  home: string;
  warnings: string[];
  warn: (text: string) => void;
}

async function withScene(fn: (scene: Scene) => Promise<void> | void): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern_ws_files_" }));
  const scene: Scene = {
    ws: join(root, "ws"),
    outside: join(root, "outside"),
    home: join(root, "home"),
    warnings: [],
    warn: (text) => scene.warnings.push(text),
  };
  for (const dir of [scene.ws, scene.outside, join(scene.home, ".tern")]) {
    await Deno.mkdir(dir, { recursive: true });
  }
  try {
    await fn(scene);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** Writes the person's own file outside the workspace; returns its path and its bytes. */
function personal(scene: Scene, name: string, text: string): { path: string; bytes: Uint8Array } {
  const path = join(scene.outside, name);
  Deno.writeTextFileSync(path, text);
  return { path, bytes: Deno.readFileSync(path) };
}

function removeIfThere(path: string): void {
  try {
    Deno.removeSync(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

function assertUntouched(file: { path: string; bytes: Uint8Array }): void {
  assert.deepEqual(Deno.readFileSync(file.path), file.bytes, `${file.path} changed`);
}

Deno.test("readWorkspaceText() reads a regular file of the workspace", async () => {
  await withScene(({ ws, warn, warnings }) => {
    Deno.writeTextFileSync(join(ws, "AGENTS.md"), "rules");
    assert.equal(readWorkspaceText(ws, join(ws, "AGENTS.md"), { what: "rules", warn }), "rules");
    assert.equal(readWorkspaceText(ws, join(ws, "missing.md"), { what: "rules", warn }), undefined);
    assert.deepEqual(warnings, []);
  });
});

Deno.test("readWorkspaceText() skips a symlink out of the workspace, naming it", async () => {
  await withScene(({ ws, outside, warn, warnings, ...scene }) => {
    const secret = personal({ ws, outside, warn, warnings, ...scene }, "secret.txt", SECRET);
    const link = join(ws, "AGENTS.md");
    Deno.symlinkSync(secret.path, link);
    assert.equal(readWorkspaceText(ws, link, { what: "project rules", warn }), undefined);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /^Skipping project rules ".*\/ws\/AGENTS\.md": it leads out of/);
    assertUntouched(secret);
  });
});

Deno.test("readWorkspaceText() skips a file below a folder that is a symlink out of the workspace", async () => {
  await withScene((scene) => {
    const { ws, outside, warn, warnings } = scene;
    const secret = personal(scene, "config.jsonc", `{ "baseUrl": "http://x.test" }`);
    Deno.symlinkSync(outside, join(ws, ".tern"));
    const file = join(ws, ".tern", "config.jsonc");
    assert.equal(readWorkspaceText(ws, file, { what: "config file", warn }), undefined);
    assert.match(warnings[0], /Skipping config file ".*\/ws\/\.tern\/config\.jsonc": it leads out/);
    assertUntouched(secret);
  });
});

Deno.test("readWorkspaceText() follows a symlink that stays inside the workspace", async () => {
  await withScene(({ ws, warn, warnings }) => {
    Deno.mkdirSync(join(ws, "docs"));
    Deno.writeTextFileSync(join(ws, "docs", "rules.md"), "inside");
    Deno.symlinkSync("docs/rules.md", join(ws, "AGENTS.md"));
    assert.equal(readWorkspaceText(ws, join(ws, "AGENTS.md"), { what: "rules", warn }), "inside");
    assert.deepEqual(warnings, []);
  });
});

Deno.test("readWorkspaceText() skips a hard link, even to a file of the workspace", async () => {
  await withScene((scene) => {
    const { ws, warn, warnings } = scene;
    const secret = personal(scene, ".env", `TERN_API_KEY=${SECRET}\n`);
    Deno.linkSync(secret.path, join(ws, ".env"));
    assert.equal(readWorkspaceText(ws, join(ws, ".env"), { what: ".env file", warn }), undefined);
    assert.match(warnings[0], /Skipping \.env file ".*\/ws\/\.env": it has 2 hard links/);
    assertUntouched(secret);
  });
});

Deno.test("readWorkspaceText() skips a FIFO without waiting for a writer", async () => {
  await withScene(async ({ ws, warn, warnings }) => {
    const fifo = join(ws, "AGENTS.md");
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.equal(made.code, 0);
    assert.equal(readWorkspaceText(ws, fifo, { what: "project rules", warn }), undefined);
    assert.match(warnings[0], /not a regular file/);
  });
});

Deno.test("readWorkspaceText() reads through a workspace path given with a symlinked parent", async () => {
  await withScene(({ ws, outside, warn, warnings }) => {
    // The person opened tern through a symlink to the workspace: that is the workspace itself.
    const alias = join(outside, "alias");
    Deno.symlinkSync(ws, alias);
    Deno.writeTextFileSync(join(ws, "AGENTS.md"), "rules");
    assert.equal(
      readWorkspaceText(alias, join(alias, "AGENTS.md"), { what: "rules", warn }),
      "rules",
    );
    assert.deepEqual(warnings, []);
  });
});

Deno.test("loadConfig() never takes a key or a server from a .env that leads out of the workspace", async () => {
  await withScene(async (scene) => {
    const { ws, home, warn, warnings } = scene;
    const secret = personal(
      scene,
      "dotenv",
      `TERN_API_KEY=${SECRET}\nTERN_BASE_URL=http://127.0.0.1:9/v1\n`,
    );
    for (const make of [Deno.symlinkSync, Deno.linkSync]) {
      warnings.length = 0;
      removeIfThere(join(ws, ".env"));
      make(secret.path, join(ws, ".env"));
      const { config, sources } = await loadConfig({ cwd: ws, env: { HOME: home }, warn });
      assert.equal(config.apiKey, undefined);
      assert.deepEqual(config.apiKeys, {});
      assert.equal(config.baseUrl, "https://api.openai.com/v1");
      assert.ok(!JSON.stringify(sources).includes("dotenv"), JSON.stringify(sources));
      assert.equal(warnings.length, 1, warnings.join("\n"));
      assert.match(warnings[0], /Skipping \.env file/);
      assertUntouched(secret);
    }
  });
});

Deno.test("loadConfig() skips a project config that is a symlink or hard link to the person's", async () => {
  await withScene(async (scene) => {
    const { ws, home, warn, warnings } = scene;
    // The person's own user config allows more than a project may: read as the project's it
    // would be refused, read as the person's it would widen the sandbox. Either way: skipped.
    const own = personal(scene, "config.jsonc", `{ "model": "from-outside" }`);
    Deno.mkdirSync(join(ws, ".tern"));
    const file = join(ws, ".tern", "config.jsonc");
    for (const make of [Deno.symlinkSync, Deno.linkSync]) {
      warnings.length = 0;
      removeIfThere(file);
      make(own.path, file);
      const { config } = await loadConfig({ cwd: ws, env: { HOME: home }, warn });
      assert.equal(config.model, "gpt-4.1-mini");
      assert.match(warnings[0], /Skipping config file ".*\/ws\/\.tern\/config\.jsonc"/);
      assertUntouched(own);
    }
  });
});

Deno.test("readProjectRules() never puts a file outside the workspace into the prompt", async () => {
  await withScene((scene) => {
    const { ws, warn, warnings } = scene;
    const secret = personal(scene, "id_rsa", `-----BEGIN KEY----- ${SECRET}`);
    Deno.symlinkSync(secret.path, join(ws, "AGENTS.md"));
    assert.equal(readProjectRules(ws, warn), undefined);
    assert.match(warnings[0], /Skipping project rules/);
    Deno.removeSync(join(ws, "AGENTS.md"));
    Deno.linkSync(secret.path, join(ws, "AGENTS.md"));
    assert.equal(readProjectRules(ws, warn), undefined);
    assert.match(warnings[1], /hard links/);
    assertUntouched(secret);
  });
});

Deno.test("loadMcpConfig() skips a project MCP file that leads out of the workspace, keeping the person's servers", async () => {
  await withScene(async (scene) => {
    const { ws, home, warn, warnings } = scene;
    const ternHome = join(home, ".tern");
    Deno.writeTextFileSync(
      join(ternHome, "mcp.json"),
      `{ "servers": { "own": { "command": "a" } } }`,
    );
    const theirs = personal(scene, "mcp.json", `{ "servers": { "x": { "command": "evil" } } }`);
    Deno.symlinkSync(theirs.path, join(ws, ".mcp.json"));
    Deno.mkdirSync(join(ws, ".tern", "mcp"), { recursive: true });
    Deno.linkSync(theirs.path, join(ws, ".tern", "mcp", "linked.json"));
    const { servers } = await loadMcpConfig({
      ternHome,
      workspace: ws,
      env: () => undefined,
      warn,
    });
    assert.deepEqual(servers.map((server) => server.name), ["own"]);
    assert.equal(warnings.length, 2, warnings.join("\n"));
    assert.match(warnings.join("\n"), /Skipping MCP config ".*\/ws\/\.mcp\.json": it leads out/);
    assert.match(warnings.join("\n"), /Skipping MCP config ".*linked\.json": it has 2 hard links/);
    assertUntouched(theirs);
  });
});

Deno.test("loadMcpConfig() lets a malformed project file disable only itself", async () => {
  await withScene(async ({ ws, home, warn, warnings }) => {
    const ternHome = join(home, ".tern");
    Deno.writeTextFileSync(
      join(ternHome, "mcp.json"),
      `{ "servers": { "own": { "command": "a" } } }`,
    );
    Deno.writeTextFileSync(join(ws, ".mcp.json"), `{ "mcpServers": { "broken": `);
    Deno.mkdirSync(join(ws, ".tern", "mcp"), { recursive: true });
    Deno.writeTextFileSync(
      join(ws, ".tern", "mcp", "a.json"),
      JSON.stringify({
        servers: {
          good: { command: "b" },
          unset: { command: "c", env: { T: "${NOT_SET_ANYWHERE}" } },
          typo: { command: "d", comand: "x" },
          own: { command: "shadow" },
        },
      }),
    );
    const { servers } = await loadMcpConfig({
      ternHome,
      workspace: ws,
      env: () => undefined,
      warn,
    });
    assert.deepEqual(servers.map((server) => [server.name, server.command]), [
      ["good", "b"],
      ["own", "a"],
    ]);
    const text = warnings.join("\n");
    assert.match(text, /\.mcp\.json": line 1, .* — its servers are not used/);
    assert.match(text, /NOT_SET_ANYWHERE.* — server "unset" is not used/);
    assert.match(text, /comand.* — server "typo" is not used/);
    assert.match(text, /MCP server "own" in ".*a\.json" is not used: your own definition/);
  });
});

/** A sparse file of `size` bytes starting with `head`: huge, yet made at once. */
function hugeFile(path: string, head: string, size: number): void {
  Deno.writeTextFileSync(path, head);
  Deno.truncateSync(path, size);
}

Deno.test("readWorkspaceText() never reads more of a repository's file than its limit", async () => {
  await withScene(({ ws, warn, warnings }) => {
    // 3 GiB: reading it whole would fail to allocate (or exhaust memory).
    hugeFile(join(ws, ".env"), "A=1\n", 3 * 1024 ** 3);
    assert.equal(readWorkspaceText(ws, join(ws, ".env"), { what: ".env file", warn }), undefined);
    assert.match(
      warnings.join("\n"),
      /Skipping \.env file ".*\.env": it is larger than 1048576 bytes/,
    );
    // With `head`, the first bytes only.
    const head = readWorkspaceText(ws, join(ws, ".env"), {
      what: ".env file",
      warn,
      maxBytes: 4,
      head: true,
    });
    assert.equal(head, "A=1\n");
  });
});

Deno.test("readProjectRules() cuts a 3 GiB AGENTS.md at its limit without reading it whole", async () => {
  await withScene(({ ws, warn }) => {
    hugeFile(join(ws, "AGENTS.md"), "# Rules\n" + "x".repeat(40_000), 3 * 1024 ** 3);
    const rules = readProjectRules(ws, warn);
    assert.ok(rules?.startsWith("# Rules\nxxx"), rules?.slice(0, 40));
    assert.match(rules ?? "", /AGENTS\.md is longer: the rest was cut\]$/);
  });
});

Deno.test("a project config file too large to read is skipped with a warning, the run goes on", async () => {
  await withScene(async ({ ws, home }) => {
    await Deno.mkdir(join(ws, ".tern"));
    hugeFile(join(ws, ".tern", "config.jsonc"), '{ "maxRounds": 3 }', 2 * 1024 * 1024);
    const warnings: string[] = [];
    const loaded = await loadConfig({
      cwd: ws,
      env: { HOME: home, TERN_HOME: join(home, ".tern") },
      warn: (text) => warnings.push(text),
    });
    assert.notEqual(loaded.config.maxRounds, 3);
    assert.match(warnings.join("\n"), /larger than 1048576 bytes/);
  });
});

Deno.test("readWorkspaceText() with workspaceIsReal still skips symlinks out, and refuses a stale root", async () => {
  await withScene((scene) => {
    const { ws, outside, warn, warnings } = scene;
    Deno.writeTextFileSync(join(ws, "a.ts"), "inside");
    const real = { what: "file", warn, workspaceIsReal: true };
    assert.equal(readWorkspaceText(ws, join(ws, "a.ts"), real), "inside");
    const secret = personal(scene, "secret.txt", SECRET);
    Deno.symlinkSync(secret.path, join(ws, "b.ts"));
    assert.equal(readWorkspaceText(ws, join(ws, "b.ts"), real), undefined);
    assert.match(warnings[0], /it leads out of the workspace/);
    // The workspace was swapped for a symlink after the run resolved it: what it names now is
    // refused, never read through the old name.
    const moved = join(outside, "moved");
    Deno.renameSync(ws, moved);
    Deno.symlinkSync(outside, ws);
    Deno.writeTextFileSync(join(outside, "c.ts"), SECRET);
    assert.equal(readWorkspaceText(ws, join(ws, "c.ts"), real), undefined);
    assertUntouched(secret);
  });
});
