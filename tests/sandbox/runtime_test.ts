/** createSandbox(): giving up an opening that is no longer wanted leaves nothing behind. */
import { deepEqual, equal, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { createSandbox } from "../../src/sandbox/runtime.ts";
import { sandboxOptionsFor as optionsFor } from "./_bwrap_helpers.ts";
import { runCgroupPrefix } from "../../src/sandbox/run_cgroup.ts";
import { processesMatching } from "../support/tmux.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

/** The run tmp folders (`tern-tmp-*`) under `dir`. */
async function tmpFolders(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name.startsWith("tern-tmp-")) names.push(entry.name);
  }
  return names;
}

/**
 * The runs' cgroups (pids and memory) of tmp folder `dir`, in any cgroup tree (none where no
 * cgroup can be made). Through `find`: Deno reads /sys only with --allow-all.
 */
async function runCgroups(dir: string): Promise<string[]> {
  const found = await new Deno.Command("find", {
    args: ["/sys/fs/cgroup", "-maxdepth", "4", "-type", "d", "-name", `${runCgroupPrefix(dir)}*`],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(found.stdout).split("\n").filter((line) => line !== "");
}

Deno.test("createSandbox() where bubblewrap cannot run leaves no cgroup behind", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-runtime-" }));
  const ws = join(root, "ws");
  await Deno.mkdir(ws);
  const tmpDir = Deno.env.get("TMPDIR") ?? "/tmp";
  const before = await runCgroups(tmpDir);
  try {
    const runtime = await createSandbox(
      optionsFor(root, ws, "no-bwrap-test", { bwrapPath: join(root, "no-bwrap") }),
    );
    try {
      equal(runtime.shellKind, "unavailable");
      // The cgroup made beside the probe is removed before the sandbox is handed out.
      deepEqual((await runCgroups(tmpDir)).filter((path) => !before.includes(path)), []);
    } finally {
      await runtime.close();
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("createSandbox() with its signal aborted rejects and leaves no tmp folder or worker", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-runtime-" }));
  const ws = join(root, "ws");
  await Deno.mkdir(ws);
  const tmpDir = Deno.env.get("TMPDIR") ?? "/tmp";
  const before = await tmpFolders(tmpDir);
  const cgroupsBefore = await runCgroups(tmpDir);
  try {
    for (const noSandbox of [false, true]) {
      const abort = new AbortController();
      const opening = createSandbox(
        optionsFor(root, ws, "abort-test", { noSandbox, warm: true, signal: abort.signal }),
      );
      abort.abort();
      await rejects(opening, /closed while it opened/);
    }
    equal((await tmpFolders(tmpDir)).filter((name) => !before.includes(name)).length, 0);
    deepEqual((await runCgroups(tmpDir)).filter((path) => !cgroupsBefore.includes(path)), []);
    equal((await processesMatching(ws)).length, 0);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("SandboxRuntime.setExtraGrants() that cannot be applied changes nothing", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-runtime-" }));
  const ws = join(root, "ws");
  await Deno.mkdir(ws);
  const runtime = await createSandbox(optionsFor(root, ws, "grant-test"));
  try {
    const grants = JSON.stringify(runtime.profile.grants);
    const flags = runtime.explain().worker;
    await rejects(runtime.setExtraGrants({ read: [join(root, "a,b")] }), RangeError);
    equal(JSON.stringify(runtime.profile.grants), grants);
    deepEqual(runtime.explain().worker, flags);
  } finally {
    await runtime.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("createSandbox() keeps tern's home out of every write grant and hides it from commands", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-runtime-" }));
  const ws = join(root, "ws");
  const ternHome = join(root, "state");
  await Deno.mkdir(ws);
  await Deno.mkdir(ternHome);
  await Deno.symlink(ternHome, join(root, "tern-link"));
  const runtime = await createSandbox(
    optionsFor(root, ws, "tern-home-test", { ternHome: join(root, "tern-link") }),
  );
  try {
    equal(runtime.ternHome, ternHome);
    await runtime.setExtraGrants({ write: [root] });
    const deny = runtime.explain().worker?.find((flag) => flag.startsWith("--deny-write="));
    // tern's home by its name and its real path, then tern's own code (own_code_test.ts).
    deepEqual(
      deny?.slice("--deny-write=".length).split(",").slice(0, 2),
      [join(root, "tern-link"), ternHome],
    );
    const bwrap = runtime.explain().bwrap;
    if (bwrap !== null) {
      const hidden = bwrap.findIndex((arg, i) => arg === "--tmpfs" && bwrap[i + 1] === ternHome);
      equal(hidden > bwrap.lastIndexOf("--bind"), true, bwrap.join(" "));
    }
  } finally {
    await runtime.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("createSandbox(): a write grant holding a tern home that does not exist yet cannot create it", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-runtime-" }));
  const ws = join(root, "ws");
  const ternHome = join(root, "not-yet");
  await Deno.mkdir(ws);
  const runtime = await createSandbox(optionsFor(root, ws, "absent-home-test", { ternHome }));
  try {
    await runtime.setExtraGrants({ write: [root] });
    if (runtime.shellKind !== "bwrap") return;
    const config = join(ternHome, "config.jsonc");
    await runtime.shell(`mkdir -p ${ternHome}; echo '{"mode":"bypass"}' > ${config}`, {
      cwd: ws,
      timeoutMs: 10_000,
    });
    await Deno.stat(config).then(
      () => equal("written", "absent"),
      (error) => equal(error instanceof Deno.errors.NotFound, true),
    );
  } finally {
    await runtime.close();
    await Deno.remove(root, { recursive: true });
  }
});

testWith(
  [bwrapNeed],
  "createSandbox() in :read-only shows a workspace under /tmp to commands, read-only",
  async () => {
    // The private /tmp hides the host's, and a read-only profile has no writable root that would
    // show the workspace again: commands failed with "bwrap: Can't chdir".
    const root = await Deno.realPath(await Deno.makeTempDir({ dir: "/tmp", prefix: "tern-ro-" }));
    const ws = join(root, "ws");
    await Deno.mkdir(ws);
    await Deno.writeTextFile(join(ws, "README.md"), "read me\n");
    const runtime = await createSandbox(
      optionsFor(root, ws, "read-only-tmp", { profile: ":read-only" }),
    );
    try {
      equal(runtime.shellKind, "bwrap");
      const run = (command: string) => runtime.shell(command, { cwd: ws, timeoutMs: 30_000 });
      const read = await run("pwd; cat README.md");
      equal(read.code, 0, read.output);
      equal(read.output, `${ws}\nread me\n`);
      const write = await run("echo x > new.txt");
      ok(write.code !== 0, write.output);
      equal(await Deno.stat(join(ws, "new.txt")).then(() => true, () => false), false);
    } finally {
      await runtime.close();
      await Deno.remove(root, { recursive: true });
    }
  },
);

Deno.test("createSandbox() takes the search prewarmSandbox() started, also when it needs none", async () => {
  const { prewarmSandbox } = await import("../../src/sandbox/prewarm.ts");
  const { takeWarmHostPrivatePaths } = await import("../../src/sandbox/host_private.ts");
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-runtime-" }));
  const ws = join(root, "ws");
  await Deno.mkdir(ws);
  try {
    // :danger-full-access has no bubblewrap: the started search is not used, but the sandbox
    // owns it and waits for it at close (the test's op sanitizer sees any that outlives it).
    prewarmSandbox();
    const runtime = await createSandbox(
      optionsFor(root, ws, "prewarm-test", { profile: ":danger-full-access" }),
    );
    equal(takeWarmHostPrivatePaths(), undefined, "the prewarmed search was left for no one");
    await runtime.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

testWith(
  [bwrapNeed],
  "createSandbox(): a granted folder a command replaced by a link is not bound (it would bind the link's target)",
  async () => {
    // Not under /tmp: the link's target must exist in the command's view (the private /tmp has
    // none of the host's folders), as a folder of the home would.
    const root = await Deno.realPath(
      await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern-swap-" }),
    );
    const ws = join(root, "ws");
    const victim = join(root, "victim");
    await Deno.mkdir(join(ws, "a/sub"), { recursive: true });
    await Deno.mkdir(victim);
    await Deno.mkdir(join(root, "home"));
    const home = join(root, "home");
    const runtime = await createSandbox(
      optionsFor(root, ws, "swap-test", { home, env: { PATH: "/usr/bin:/bin", HOME: home } }),
    );
    try {
      equal(runtime.shellKind, "bwrap");
      const run = (command: string) => runtime.shell(command, { cwd: ws, timeoutMs: 30_000 });
      // A write grant for a folder inside the workspace, as a reviewer may give one.
      await runtime.setExtraGrants({ write: [join(ws, "a/sub")] });
      const swap = await run("mv a old && mkdir a && ln -s ../../victim a/sub && echo swapped");
      equal(swap.output.trim(), "swapped", swap.output);
      // As the bash tool does after a command that may have changed the tree.
      runtime.shellTreeChanged();
      const write = await run("echo pwned > a/sub/x");
      ok(write.code !== 0, write.output);
      equal(await Deno.stat(join(victim, "x")).then(() => true, () => false), false, write.output);
      // The tool worker restarts with the grants changed: its view leaves the link out too. The
      // link's target is in its view (read-only, as a read grant or the folder holding Deno's
      // cache would be), so a bind through the link would make it writable.
      await runtime.setExtraGrants({
        write: [join(ws, "a/sub"), join(ws, "old/sub")],
        read: [victim],
      });
      if (runtime.workerKind === "bwrap") {
        const signal = new AbortController().signal;
        const roots = { read: [victim], write: [join(ws, "a/sub"), join(ws, "old/sub")] };
        const args = { path: join(ws, "a/sub/y"), content: "pwned" };
        const written = await runtime.worker!.call("write", args, { signal, roots });
        equal(written.status, "ERROR", JSON.stringify(written));
        equal(await Deno.stat(join(victim, "y")).then(() => true, () => false), false);
      }
      // The folder that is still what was granted stays writable.
      equal((await run("echo ok > old/sub/y && cat old/sub/y")).output, "ok\n");
    } finally {
      await runtime.close();
      await Deno.remove(root, { recursive: true });
    }
  },
);

testWith(
  [bwrapNeed],
  "createSandbox() with a workspace that is tern's home or inside it lets no command write there",
  async () => {
    // Not under /tmp: the private /tmp would hide tern's home without the sandbox having to.
    const root = await Deno.realPath(
      await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern-home-ws-" }),
    );
    const ternHome = join(root, "state");
    const home = join(root, "home");
    await Deno.mkdir(join(ternHome, "proj"), { recursive: true });
    await Deno.mkdir(join(ternHome, "sessions"));
    await Deno.mkdir(home);
    await Deno.symlink(ternHome, join(root, "tern-link"));
    const config = join(ternHome, "config.jsonc");
    await Deno.writeTextFile(config, "{}");
    const env = { PATH: "/usr/bin:/bin", HOME: home };
    try {
      // tern's home as the workspace, by its name or through a link; a folder inside it.
      for (
        const [ws, named] of [[ternHome, ternHome], [ternHome, join(root, "tern-link")], [
          join(ternHome, "proj"),
          ternHome,
        ]]
      ) {
        const runtime = await createSandbox(
          optionsFor(root, ws, "tern-home-ws-test", { ternHome: named, home, env }),
        );
        try {
          equal(runtime.shellKind, "bwrap");
          const result = await runtime.shell(
            `printf '{"mode":"bypass"}' > ${config}; touch ${ternHome}/sessions/PLANTED ` +
              `${ws}/PLANTED`,
            { cwd: ws, timeoutMs: 30_000 },
          );
          const where = `${ws} (tern's home named ${named}): ${result.output}`;
          equal(await Deno.readTextFile(config), "{}", where);
          for (const planted of [join(ternHome, "sessions/PLANTED"), join(ws, "PLANTED")]) {
            equal(await Deno.stat(planted).then(() => true, () => false), false, where);
          }
        } finally {
          await runtime.close();
        }
      }
      // A write grant of tern's home or a folder in it, made without the permission gate.
      const ws = join(root, "ws");
      await Deno.mkdir(ws);
      const runtime = await createSandbox(
        optionsFor(root, ws, "tern-home-grant-test", { ternHome, home, env }),
      );
      try {
        await runtime.setExtraGrants({ write: [ternHome, join(ternHome, "sessions")] });
        const result = await runtime.shell(
          `printf '{"mode":"bypass"}' > ${config}; touch ${ternHome}/sessions/PLANTED`,
          { cwd: ws, timeoutMs: 30_000 },
        );
        equal(await Deno.readTextFile(config), "{}", result.output);
        equal(
          await Deno.stat(join(ternHome, "sessions/PLANTED")).then(() => true, () => false),
          false,
        );
        const bwrap = runtime.explain().bwrap ?? [];
        const bound = bwrap.filter((arg, i) =>
          bwrap[i - 1] === "--bind" && arg.startsWith(ternHome)
        );
        deepEqual(bound, [], bwrap.join(" "));
      } finally {
        await runtime.close();
      }
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
);
