/**
 * A command approved to run without the sandbox (`request_permissions` with `withoutSandbox`,
 * or a background process so approved) starts beside a sandbox whose commands may write some
 * folders: a program they put in one of those on PATH (`~/tools/bin/git`) would run on the host
 * when the approved command names it. Its PATH is without the folders sandboxed commands may
 * write, as granted when it starts; the others stay.
 */
import { equal } from "node:assert/strict";
import { join } from "node:path";
import { createSandbox } from "../../src/sandbox/runtime.ts";
import { bwrapTest } from "./_bwrap_helpers.ts";

bwrapTest(
  "createSandbox(): a command run without the sandbox finds no program in a folder granted for writing",
  async () => {
    // Not under /tmp: the sandbox's private /tmp would hide it.
    const root = await Deno.realPath(
      await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_hp_" }),
    );
    const home = join(root, "home");
    const ws = join(home, "app");
    const granted = join(home, "tools", "bin");
    const own = join(home, "own", "bin");
    for (const dir of [ws, granted, own]) await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(join(own, "own-tool"), "#!/bin/sh\necho own tool\n", { mode: 0o755 });
    const runtime = await createSandbox({
      workspace: ws,
      profile: ":workspace",
      noSandbox: false,
      home,
      ternHome: join(root, "tern-home"),
      env: { PATH: `${granted}:${own}:/usr/bin:/bin`, HOME: home },
      handlerUrl: new URL("../../src/tools/worker_handler.ts", import.meta.url),
      runId: "host-path-test",
    });
    try {
      await runtime.setExtraGrants({ write: [granted] });
      // A sandboxed command plants a program there.
      const planted = await runtime.shell(
        `printf '#!/bin/sh\\necho PLANTED\\n' > ${granted}/git && chmod +x ${granted}/git && echo ok`,
        { cwd: ws, timeoutMs: 30_000 },
      );
      equal(planted.output, "ok\n");
      const host = await runtime.unsandboxedShell(
        "command -v git >/dev/null && git --version | head -c 4; echo; own-tool",
        { cwd: ws, timeoutMs: 30_000 },
      );
      equal(host.output, "git \nown tool\n");
    } finally {
      await runtime.close();
      await Deno.remove(root, { recursive: true });
    }
  },
);
