/**
 * The folders a project's MCP server names (`cwd`, `sandbox.writable`) and its program, started
 * for real in bubblewrap through `openMcp()`: a symlink out of the workspace, planted before or
 * after trust, never becomes a folder the server sees or writes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openMcp } from "../../src/harness/mcp_setup.ts";
import { trustServers } from "../../src/mcp/trust.ts";
import { bwrapTest } from "../sandbox/_bwrap_helpers.ts";

interface Scene {
  ternHome: string;
  ws: string;
  /** A folder beside the workspace that a project's server must never reach. */
  outside: string;
  warnings: string[];
  /** Writes the workspace's `.mcp.json` with one server `srv` (the fault server) plus `extra`. */
  project(extra: Record<string, unknown>): void;
  open(): ReturnType<typeof openMcp>;
}

async function withScene(fn: (scene: Scene) => Promise<void>): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern_mcp_folders_" }));
  const ternHome = join(root, "home", ".tern");
  const ws = join(root, "ws");
  const outside = join(root, "outside");
  for (const dir of [ternHome, ws, outside]) await Deno.mkdir(dir, { recursive: true });
  Deno.writeTextFileSync(join(outside, "secret.txt"), "OUTSIDE-SECRET");
  Deno.copyFileSync(
    new URL("../fixtures/mcp/fault_server.ts", import.meta.url),
    join(ws, "srv.ts"),
  );
  const warnings: string[] = [];
  const scene: Scene = {
    ternHome,
    ws,
    outside,
    warnings,
    project(extra) {
      const srv = {
        command: Deno.execPath(),
        args: ["run", "-A", "--no-config", "./srv.ts", "ok"],
      };
      Deno.writeTextFileSync(
        join(ws, ".mcp.json"),
        JSON.stringify({ mcpServers: { srv: { ...srv, ...extra } } }),
      );
    },
    open: () =>
      openMcp({ ternHome, workspace: ws, env: () => undefined, warn: (t) => warnings.push(t) }),
  };
  try {
    await fn(scene);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** Trusts `srv` as its definition is now, and returns a fresh manager for the workspace. */
async function trustedManager(scene: Scene) {
  const first = await scene.open();
  await trustServers(scene.ternHome, scene.ws, first.servers);
  const opened = await scene.open();
  assert.ok(opened.manager !== undefined, scene.warnings.join("\n"));
  return opened.manager;
}

bwrapTest("openMcp() refuses a project server whose writable folder is a symlink out", async () => {
  await withScene(async (scene) => {
    Deno.symlinkSync("../outside", join(scene.ws, "cache"));
    scene.project({ sandbox: { writable: ["cache"] } });
    const { servers } = await scene.open();
    assert.deepEqual(servers, []);
    assert.match(
      scene.warnings.join("\n"),
      /"mcpServers\.srv\.sandbox\.writable": ".*\/ws\/cache" is a symlink \(to "\.\.\/outside"\) — a project's server may name only real folders of the workspace: name the folder itself — server "srv" is not used/,
    );
    // A link further down the path counts the same.
    Deno.removeSync(join(scene.ws, "cache"));
    Deno.symlinkSync("../outside", join(scene.ws, "data"));
    scene.project({ sandbox: { writable: ["data/sub"] } });
    scene.warnings.length = 0;
    assert.deepEqual((await scene.open()).servers, []);
    assert.match(
      scene.warnings.join("\n"),
      /goes through the symlink "data" \(to "\.\.\/outside"\)/,
    );
  });
});

bwrapTest("a writable folder swapped for a symlink after trust is never bound", async () => {
  await withScene(async (scene) => {
    await Deno.mkdir(join(scene.ws, "cache"));
    scene.project({ sandbox: { writable: ["cache"] } });
    const manager = await trustedManager(scene);
    try {
      // The real folder works: the server writes there.
      const status = await manager.startServer("srv");
      assert.equal(status.state, "READY", status.error);
      const wrote = await manager.call("srv", "write", {
        path: join(scene.ws, "cache", "x"),
        text: "ok",
      }, new AbortController().signal);
      assert.equal(wrote.status, "SUCCEEDED", JSON.stringify(wrote));
      assert.equal(Deno.readTextFileSync(join(scene.ws, "cache", "x")), "ok");
    } finally {
      await manager.close();
    }

    // A command of the agent swaps the folder for a link to the outside folder; a manager made
    // before the swap (the config read, trust checked) starts the server after it.
    const late = await trustedManager(scene);
    try {
      Deno.removeSync(join(scene.ws, "cache"), { recursive: true });
      Deno.symlinkSync("../outside", join(scene.ws, "cache"));
      const status = await late.startServer("srv");
      assert.equal(status.state, "FAILED");
      assert.match(
        status.error ?? "",
        /its writable folder ".*\/ws\/cache" is a symlink \(to "\.\.\/outside"\) — a project's server may name only real folders/,
      );
    } finally {
      await late.close();
    }
    // And from the next start on the config is refused outright.
    scene.warnings.length = 0;
    assert.deepEqual((await scene.open()).servers, []);
    assert.match(scene.warnings.join("\n"), /is a symlink \(to "\.\.\/outside"\)/);
    assert.deepEqual([...Deno.readDirSync(scene.outside)].map((e) => e.name), ["secret.txt"]);
  });
});

bwrapTest("a project server's cwd must be a real folder inside the workspace", async () => {
  await withScene(async (scene) => {
    scene.project({ cwd: scene.outside });
    assert.deepEqual((await scene.open()).servers, []);
    assert.match(
      scene.warnings.join("\n"),
      /"mcpServers\.srv\.cwd": ".*\/outside" is outside the workspace — a project's server may use only folders inside it/,
    );
    scene.warnings.length = 0;
    Deno.symlinkSync("../outside", join(scene.ws, "link"));
    scene.project({ cwd: "link" });
    assert.deepEqual((await scene.open()).servers, []);
    assert.match(scene.warnings.join("\n"), /"mcpServers\.srv\.cwd": ".*\/ws\/link" is a symlink/);

    // Swapped after the config was read: refused at the start.
    Deno.removeSync(join(scene.ws, "link"));
    await Deno.mkdir(join(scene.ws, "link"));
    Deno.copyFileSync(join(scene.ws, "srv.ts"), join(scene.ws, "link", "srv.ts"));
    const manager = await trustedManager(scene);
    try {
      Deno.removeSync(join(scene.ws, "link"), { recursive: true });
      Deno.symlinkSync("../outside", join(scene.ws, "link"));
      const status = await manager.startServer("srv");
      assert.equal(status.state, "FAILED");
      assert.match(status.error ?? "", /its working folder ".*\/ws\/link" is a symlink/);
    } finally {
      await manager.close();
    }
  });
});

bwrapTest("a project server may not write in .git or .tern", async () => {
  await withScene(async (scene) => {
    for (const folder of [".git/hooks", ".tern"]) {
      scene.warnings.length = 0;
      scene.project({ sandbox: { writable: [folder] } });
      assert.deepEqual((await scene.open()).servers, []);
      assert.match(
        scene.warnings.join("\n"),
        /is in "\.(git|tern)" — a project's server may not write there/,
      );
    }
  });
});

bwrapTest(
  "a project's program named by a path outside the workspace is not shown to it",
  async () => {
    await withScene(async (scene) => {
      // Under /tmp (private in the sandbox) beside the workspace: it would run only if revealed.
      const program = join(scene.outside, "run.sh");
      Deno.writeTextFileSync(program, `#!/bin/sh\nexec "${Deno.execPath()}" "$@"\n`);
      Deno.chmodSync(program, 0o755);
      scene.project({ command: program });
      const manager = await trustedManager(scene);
      try {
        const status = await manager.startServer("srv");
        assert.equal(status.state, "FAILED");
        assert.match(status.error ?? "", /run\.sh/);
      } finally {
        await manager.close();
      }
    });
  },
);
