/**
 * What pinning reads of the files a repository's hook (or MCP server) names: nothing until the
 * person trusted its hooks, never more than the cap of one file, never a file a symlink leads
 * to outside the workspace, never a FIFO; a file that cannot be pinned never holds trust.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import {
  MAX_PINNED_FILE_BYTES,
  NOT_HASHED,
  pinChanges,
  pinnedFiles,
} from "../../src/mcp/_pinned_files.ts";
import { loadHooks } from "../../src/sandbox/hooks/load.ts";
import { trustHooks } from "./_trust.ts";

async function withDirs(
  body: (dirs: { root: string; ternHome: string; workspace: string; outside: string }) => Promise<
    void
  >,
): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "hooks-pins-" }));
  const dirs = {
    root,
    ternHome: join(root, "tern-home"),
    workspace: join(root, "ws"),
    outside: join(root, "outside"),
  };
  await Deno.mkdir(dirs.ternHome);
  await Deno.mkdir(join(dirs.workspace, ".claude"), { recursive: true });
  await Deno.mkdir(dirs.outside);
  try {
    await body(dirs);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

function settings(command: string): string {
  return JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "command", command }] }] } });
}

/** A sparse file of `bytes`: no disk, but reading it whole would cost that much memory. */
async function sparse(path: string, bytes: number): Promise<void> {
  await Deno.writeFile(path, new Uint8Array());
  await Deno.truncate(path, bytes);
}

async function mkfifo(path: string): Promise<void> {
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  equal(made.code, 0, new TextDecoder().decode(made.stderr));
}

Deno.test("loadHooks() reads no file a never-trusted project hook names", async () => {
  await withDirs(async ({ ternHome, workspace }) => {
    await sparse(join(workspace, "data.bin"), 2 * MAX_PINNED_FILE_BYTES);
    await Deno.writeTextFile(join(workspace, "lib.sh"), "echo hi\n");
    await Deno.writeTextFile(
      join(workspace, ".claude", "settings.json"),
      settings("sh lib.sh; wc -c data.bin"),
    );
    const hooks = await loadHooks({ ternHome, workspace });
    equal(hooks.sources.length, 1);
    equal(hooks.sources[0].trusted, false);
    // What trust would pin is named; nothing of it is read (the too large one by its size).
    deepEqual(hooks.sources[0].source.files, {
      "lib.sh": NOT_HASHED,
      "data.bin": "unpinnable: it is larger than 32 MiB",
    });
  });
});

Deno.test("pinnedFiles() streams a file's hash and never reads one over the cap, a FIFO or a link out", async () => {
  await withDirs(async ({ workspace, outside }) => {
    const content = crypto.getRandomValues(new Uint8Array(60_000));
    const script = new Uint8Array(content.length * 5);
    for (let i = 0; i < 5; i++) script.set(content, i * content.length);
    await Deno.writeFile(join(workspace, "run.sh"), script);
    await sparse(join(workspace, "data.bin"), MAX_PINNED_FILE_BYTES + 1);
    await mkfifo(join(workspace, "pipe.sh"));
    await Deno.writeTextFile(join(outside, "real.sh"), "echo outside\n");
    await Deno.symlink(join(outside, "real.sh"), join(workspace, "lib.sh"));

    const pins = await pinnedFiles(
      ["bash", "run.sh", "data.bin", "pipe.sh", "lib.sh"],
      workspace,
      workspace,
    );
    equal(pins["run.sh"], createHash("sha256").update(script).digest("hex"));
    // Its content outside is not the project's: pinned by where the link leads, never read.
    equal(pins["lib.sh"], `outside the workspace: ${join(outside, "real.sh")}`);
    match(pins["data.bin"], /larger than 32 MiB/);
    match(pins["pipe.sh"], /not a regular file/);

    // Those that cannot be pinned never hold trust, however often they are pinned the same.
    const changes = pinChanges(pins, pins);
    equal(changes.length, 2);
    match(changes[0], /^"data\.bin" cannot be pinned \(it is larger than 32 MiB\)/);
    match(changes[1], /^"pipe\.sh" cannot be pinned \(it is not a regular file\)/);
  });
});

Deno.test("loadHooks() never trusts a hook whose script cannot be pinned, and says why", async () => {
  await withDirs(async ({ ternHome, workspace }) => {
    const places = { ternHome, workspace };
    await Deno.mkdir(join(workspace, "hooks"));
    await sparse(join(workspace, "hooks", "big.sh"), MAX_PINNED_FILE_BYTES + 1024);
    await Deno.writeTextFile(
      join(workspace, ".claude", "settings.json"),
      settings("bash hooks/big.sh"),
    );
    await trustHooks(places, (await loadHooks(places)).sources.map((loaded) => loaded.source));
    const [loaded] = (await loadHooks(places)).sources;
    equal(loaded.trusted, false);
    match(loaded.whyNot!, /"hooks\/big\.sh" cannot be pinned \(it is larger than 32 MiB\)/);

    // Made small, it can be trusted.
    await Deno.writeTextFile(join(workspace, "hooks", "big.sh"), "exit 0\n");
    await trustHooks(places, (await loadHooks(places)).sources.map((each) => each.source));
    ok((await loadHooks(places)).sources[0].trusted);
  });
});
