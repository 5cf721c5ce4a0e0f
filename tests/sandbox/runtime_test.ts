/** createSandbox(): giving up an opening that is no longer wanted leaves nothing behind. */
import { equal, rejects } from "node:assert/strict";
import { join } from "node:path";
import { createSandbox } from "../../src/sandbox/runtime.ts";
import { processesMatching } from "../support/tmux.ts";

/** The run tmp folders (`tern-tmp-*`) under `dir`. */
async function tmpFolders(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name.startsWith("tern-tmp-")) names.push(entry.name);
  }
  return names;
}

Deno.test("createSandbox() with its signal aborted rejects and leaves no tmp folder or worker", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-runtime-" }));
  const ws = join(root, "ws");
  await Deno.mkdir(ws);
  const tmpDir = Deno.env.get("TMPDIR") ?? "/tmp";
  const before = await tmpFolders(tmpDir);
  try {
    for (const noSandbox of [false, true]) {
      const abort = new AbortController();
      const opening = createSandbox({
        workspace: ws,
        profile: ":workspace",
        noSandbox,
        ternHome: join(root, "tern-home"),
        env: { PATH: "/usr/bin:/bin", HOME: root },
        home: root,
        handlerUrl: new URL("../../src/tools/worker_handler.ts", import.meta.url),
        runId: "abort-test",
        warm: true,
        signal: abort.signal,
      });
      abort.abort();
      await rejects(opening, /closed while it opened/);
    }
    equal((await tmpFolders(tmpDir)).filter((name) => !before.includes(name)).length, 0);
    equal((await processesMatching(ws)).length, 0);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
