/**
 * The tool worker may start the system's ripgrep where it runs in bubblewrap
 * (src/sandbox/worker/ripgrep.ts): only `rg` from a system folder, only in that view, and a
 * grep through it reaches no more than the worker's own code.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { systemRipgrep } from "../../src/sandbox/worker/ripgrep.ts";
import { workerRunArgs } from "../../src/sandbox/worker/flags.ts";
import { createSandbox } from "../../src/sandbox/runtime.ts";
import { bwrapTest, sandboxOptionsFor, withBox } from "./_bwrap_helpers.ts";

/** The system's ripgrep on this machine (its real path), if any. */
const SYSTEM_RG = await Deno.realPath("/usr/bin/rg").catch(() => null);
const handlerUrl = new URL("../../src/tools/worker_handler.ts", import.meta.url);

/** A folder holding an executable `rg` that writes `marker` when it runs. */
async function fakeRipgrep(root: string, marker: string): Promise<string> {
  const dir = join(root, "fake-bin");
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(dir, "rg"), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
  return dir;
}

Deno.test("systemRipgrep() takes rg only from a system folder, passing over others on PATH", async () => {
  await withBox(async (box) => {
    const fake = await fakeRipgrep(box.root, join(box.root, "marker"));
    equal(systemRipgrep(`${fake}:relative/bin:`), null);
    equal(systemRipgrep(`${fake}:bin:/usr/bin`), SYSTEM_RG);
    // A link to the system's program is that program.
    const linked = join(box.root, "linked");
    await Deno.mkdir(linked);
    if (SYSTEM_RG !== null) {
      await Deno.symlink(SYSTEM_RG, join(linked, "rg"));
      equal(systemRipgrep(linked), SYSTEM_RG);
    }
    // A link from a system-looking name into the box is not.
    await Deno.symlink(join(fake, "rg"), join(box.root, "rg"));
    equal(systemRipgrep(box.root), null);
  });
});

Deno.test("workerRunArgs() adds the programs to the run grant, which stays whole when it is all", () => {
  const grants = { read: ["/w"], write: [], net: [], env: [], run: [] as string[] };
  const args = workerRunArgs({ grants, handlerUrl, configPath: null, programs: ["/usr/bin/rg"] });
  deepEqual(args.filter((arg) => arg.startsWith("--allow-run")), ["--allow-run=/usr/bin/rg"]);
  const none = workerRunArgs({ grants, handlerUrl, configPath: null });
  deepEqual(none.filter((arg) => arg.startsWith("--allow-run")), []);
  const all = workerRunArgs({
    grants: { ...grants, run: "all" },
    handlerUrl,
    configPath: null,
    programs: ["/usr/bin/rg"],
  });
  deepEqual(all.filter((arg) => arg.startsWith("--allow-run")), ["--allow-run"]);
});

bwrapTest(
  "grep in the bubblewrap worker runs the system's ripgrep, never one a PATH entry elsewhere names",
  async () => {
    await withBox(async (box) => {
      const marker = join(box.root, "marker");
      const fake = await fakeRipgrep(box.root, marker);
      await Deno.writeTextFile(join(box.ws, "src.ts"), "const needle = 1;\n");
      const runtime = await createSandbox(
        sandboxOptionsFor(box.root, box.ws, "ripgrep-test", {
          home: box.home,
          env: { PATH: `${fake}:/usr/bin:/bin`, HOME: box.home },
        }),
      );
      try {
        equal(runtime.workerKind, "bwrap");
        const flags = (runtime.explain().worker ?? []).filter((arg) =>
          arg.startsWith("--allow-run")
        );
        deepEqual(flags, SYSTEM_RG === null ? [] : [`--allow-run=${SYSTEM_RG}`]);
        const signal = new AbortController().signal;
        const found = await runtime.worker!.call("grep", { pattern: "needle" }, { signal });
        equal(found.status, "SUCCEEDED", JSON.stringify(found));
        ok(found.status === "SUCCEEDED" && found.output.includes("src.ts:1:const needle = 1;"));
        const engine = found.status === "SUCCEEDED" && found.details?.kind === "matches"
          ? found.details.engine
          : undefined;
        equal(engine, SYSTEM_RG === null ? "javascript" : "ripgrep");
        equal(await Deno.stat(marker).then(() => true, () => false), false, "the other rg ran");
        // A link in the workspace to a file outside it leads ripgrep nowhere: it follows no
        // link, and the view holds no outside file. (A path outside the workspace is refused
        // before any search, and denied_paths_test.ts covers what a deny rule hides.)
        await Deno.writeTextFile(join(box.outside, "secret.txt"), "needle-outside\n");
        await Deno.symlink(join(box.outside, "secret.txt"), join(box.ws, "link.txt"));
        const linked = await runtime.worker!.call("grep", { pattern: "needle-outside" }, {
          signal,
        });
        ok(
          linked.status === "SUCCEEDED" && linked.output.startsWith("No matches"),
          JSON.stringify(linked),
        );
      } finally {
        await runtime.close();
      }
    });
  },
);
