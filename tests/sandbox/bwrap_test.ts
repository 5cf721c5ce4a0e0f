import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import {
  bwrapArgs,
  bwrapArgvFor,
  KERNEL_WRITABLE,
  launchArgv,
  platformReason,
  probeBwrap,
  runTargets,
  sandboxEnv,
} from "../../src/sandbox/bwrap.ts";
import { DEFAULT_LIMITS } from "../../src/sandbox/limits.ts";
import {
  gitDirsUnder,
  hostSocketLocations,
  secretLocations,
} from "../../src/sandbox/protected_paths.ts";
import {
  createBwrapRunner,
  createUnsandboxedRunner,
  shellEnv,
} from "../../src/sandbox/shell_runner.ts";
import {
  assertNoProcessWith,
  bwrapTest,
  marker,
  planFor,
  processesWith,
  withBox,
} from "./_bwrap_helpers.ts";

/** What bwrapArgs() puts in for /run on this machine: an empty /run of 16 MiB. */
function runPart(): string[] {
  const size = ["--size", String(16 * 1024 * 1024)];
  const part = [...size, "--tmpfs", "/run"];
  if (Deno.lstatSync("/var/run").isDirectory) part.push(...size, "--tmpfs", "/var/run");
  return part;
}

/** /dev: fresh, with a /dev/shm of `tmpMb` MiB, then read-only. */
function devPart(tmpMb: number): string[] {
  return [
    ...["--dev", "/dev", "--perms", "01777", "--size", String(tmpMb * 1024 * 1024)],
    ...["--tmpfs", "/dev/shm", "--remount-ro", "/dev"],
  ];
}

/**
 * The head of every sandboxed command: exit when tern is gone, else leave a watchdog on the
 * liveness pipe (twice removed: bubblewrap's init is its parent), then close the pipe.
 */
const LIVENESS_HEAD = "{ read -t 0 -u 9 && exit 137; } 2>/dev/null; " +
  "if [ -e /proc/self/fd/9 ]; then ( ( read -r -u 9 _; read -r _tern_init </proc/1/comm; " +
  '[ "$_tern_init" = bwrap ] && kill -KILL -1 ) &) </dev/null >/dev/null 2>&1; ' +
  "exec 9<&-; fi; ";

Deno.test("bwrapArgs() builds the complete argv in a fixed order", async () => {
  await withBox(async (box) => {
    await Deno.symlink(join(box.ws, ".git"), join(box.ws, "git_link"));
    await Deno.symlink(join(box.home, ".ssh"), join(box.home, "ssh_link"));
    const plan = {
      cwd: box.ws,
      writable: [box.ws, box.outside],
      readOnly: [join(box.ws, ".git"), join(box.ws, "missing"), join(box.ws, "git_link")],
      hidden: [
        join(box.home, "ssh_link"),
        join(box.home, ".ssh"),
        join(box.home, ".netrc"),
        join(box.home, ".nope"),
      ],
      limits: { ...DEFAULT_LIMITS, tmpMb: 64 },
      network: false,
      env: { PATH: "/usr/bin:/bin", HOME: box.home, LD_PRELOAD: "/evil.so" },
    };
    deepEqual(bwrapArgs(plan, "echo hi"), [
      ...["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"],
      ...["--ro-bind", "/", "/", "--proc", "/proc"],
      ...devPart(64),
      ...kernelPart(),
      ...runPart(),
      ...["--size", String(64 * 1024 * 1024), "--tmpfs", "/tmp"],
      ...["--bind", box.ws, box.ws, "--bind", box.outside, box.outside],
      ...["--ro-bind", join(box.ws, ".git"), join(box.ws, ".git")],
      ...["--tmpfs", join(box.home, ".ssh"), "--remount-ro", join(box.home, ".ssh")],
      ...["--ro-bind", "/dev/null", join(box.home, ".netrc")],
      ...["--chdir", box.ws, "--", "bash", "-c"],
      LIVENESS_HEAD +
      "{ ulimit -u 1024; ulimit -d 8388608; ulimit -t 1800; ulimit -f 1048576; } 2>/dev/null; " +
      "exec 2>&1; echo hi",
    ]);
  });
});

/** The kernel interfaces bound read-only, right after `/proc` is mounted. */
function kernelPart(): string[] {
  return KERNEL_WRITABLE.flatMap((path) => ["--ro-bind-try", path, path]);
}

Deno.test("bwrapArgs() masks, shows back, guards and filters in a fixed order", async () => {
  await withBox((box) => {
    const plan = {
      cwd: box.ws,
      writable: [box.ws],
      readOnly: [],
      masked: [box.home, box.root],
      visible: [join(box.home, ".bashrc"), join(box.home, ".absent")],
      hidden: [join(box.home, ".ssh"), join(box.outside, "secret.txt")],
      guarded: [join(box.ws, ".tern"), join(box.ws, "README.md")],
      seccomp: "/f.bpf",
      limits: { ...DEFAULT_LIMITS, tmpMb: 64 },
      network: false,
      env: { PATH: "/usr/bin:/bin" },
    };
    deepEqual(bwrapArgs(plan, "echo hi"), [
      ...["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"],
      ...["--ro-bind", "/", "/", "--proc", "/proc"],
      ...devPart(64),
      ...kernelPart(),
      ...runPart(),
      // Outer masks first; what is shown is bound back before the writable roots.
      ...["--tmpfs", box.root, "--tmpfs", box.home],
      ...["--ro-bind", join(box.home, ".bashrc"), join(box.home, ".bashrc")],
      ...["--size", String(64 * 1024 * 1024), "--tmpfs", "/tmp", "--bind", box.ws, box.ws],
      // A guard only where nothing is (README.md exists); hidden paths a mask hides already
      // are left out.
      ...["--tmpfs", join(box.ws, ".tern"), "--remount-ro", join(box.ws, ".tern")],
      ...["--remount-ro", box.root, "--remount-ro", box.home],
      ...["--seccomp", "3"],
      ...["--chdir", box.ws, "--", "bash", "-c"],
      LIVENESS_HEAD +
      "{ ulimit -u 1024; ulimit -d 8388608; ulimit -t 1800; ulimit -f 1048576; } 2>/dev/null; " +
      "exec 2>&1; echo hi",
    ]);
    deepEqual(launchArgv(plan, ["--x"], "/b/bwrap").args.slice(2), [
      "tern-sandbox",
      "/f.bpf",
      "/b/bwrap",
      "--x",
    ]);
    return Promise.resolve();
  });
});

Deno.test("bwrapArgs() shares the network only when the plan says so", async () => {
  await withBox(async (box) => {
    const closed = bwrapArgs(await planFor(box), "true");
    const open = bwrapArgs(await planFor(box, { network: true }), "true");
    ok(!closed.includes("--share-net"));
    deepEqual(open.slice(0, 2), ["--unshare-all", "--share-net"]);
  });
});

Deno.test("bwrapArgs() skips hidden paths inside a hidden folder and repeated paths", async () => {
  await withBox(async (box) => {
    const ssh = join(box.home, ".ssh");
    const plan = await planFor(box, {
      readOnly: [join(box.ws, ".git"), join(box.ws, ".git")],
      hidden: [ssh, join(ssh, "id_rsa"), ssh],
    });
    const args = bwrapArgs(plan, "true");
    equal(args.filter((arg) => arg === ssh).length, 2, args.join(" "));
    equal(args.filter((arg) => arg === join(ssh, "id_rsa")).length, 0);
    equal(args.filter((arg) => arg === join(box.ws, ".git")).length, 2);
  });
});

Deno.test("runTargets() keeps the /run targets of links only", async () => {
  await withBox(async (box) => {
    await Deno.symlink("/run", join(box.root, "to_run"));
    await Deno.symlink("/etc/hostname", join(box.root, "to_etc"));
    await Deno.symlink(join(box.root, "gone"), join(box.root, "dangling"));
    const links = ["to_run", "to_etc", "dangling", "ws/README.md"].map((p) => join(box.root, p));
    deepEqual(runTargets(links), ["/run"]);
  });
});

Deno.test("probeBwrap() reports the version when bwrap can start a sandbox", async () => {
  const probe = await probeBwrap();
  if (!probe.ok) {
    console.warn(`\n!!!!! bubblewrap cannot run here: ${probe.reason} !!!!!\n`);
    return;
  }
  ok(/^\d+\.\d+/.test(probe.version), probe.version);
  equal(await probeBwrap(), probe);
});

Deno.test("probeBwrap() says why when bwrap is missing or cannot start", async () => {
  const missing = await probeBwrap({ bwrapPath: "/nonexistent/bwrap" });
  deepEqual(missing, {
    ok: false,
    reason: 'Cannot run "/nonexistent/bwrap": not installed (install bubblewrap)',
  });
  await withBox(async (box) => {
    const fake = join(box.root, "bwrap");
    await Deno.writeTextFile(
      fake,
      `#!/bin/sh\n[ "$1" = --version ] && { echo "bubblewrap 9.9"; exit 0; }\n` +
        `echo "bwrap: No permissions to create new namespace" >&2; exit 1\n`,
    );
    await Deno.chmod(fake, 0o755);
    deepEqual(await probeBwrap({ bwrapPath: fake }), {
      ok: false,
      reason: "Cannot start a bubblewrap sandbox: bwrap: No permissions to create new namespace",
    });
  });
});

Deno.test("secretLocations() lists key and credential stores under home", () => {
  const found = secretLocations("/h");
  for (const path of ["/h/.ssh", "/h/.aws", "/h/.config/gh", "/h/.netrc", "/h/.tern"]) {
    ok(found.includes(path), path);
  }
});

Deno.test("hostSocketLocations() names agent and engine sockets from env", () => {
  const found = hostSocketLocations({
    SSH_AUTH_SOCK: "/x/agent.sock",
    DOCKER_HOST: "unix:///y/docker.sock",
    GPG_AGENT_INFO: "/z/S.gpg-agent:0:1",
  });
  deepEqual(found.slice(0, 3), ["/x/agent.sock", "/y/docker.sock", "/z/S.gpg-agent"]);
  ok(!hostSocketLocations({ DOCKER_HOST: "tcp://h:2375" }).some((p) => p.includes("h:2375")));
});

Deno.test("gitDirsUnder() finds nested repositories and .git files, node_modules too, not links", async () => {
  await withBox(async (box) => {
    await Deno.mkdir(join(box.ws, "node_modules/dep/.git"), { recursive: true });
    await Deno.mkdir(join(box.outside, "repo/.git"), { recursive: true });
    await Deno.symlink(join(box.outside, "repo"), join(box.ws, "linked"));
    deepEqual(await gitDirsUnder([box.ws]), [
      join(box.ws, ".git"),
      join(box.ws, "node_modules/dep/.git"),
      join(box.ws, "sub/.git"),
      join(box.ws, "wt/.git"),
    ]);
    deepEqual(await gitDirsUnder([join(box.root, "missing")]), []);
  });
});

Deno.test("gitDirsUnder() stops at maxDepth and maxEntries", async () => {
  await withBox(async (box) => {
    await Deno.mkdir(join(box.ws, "a/b/c/.git"), { recursive: true });
    ok((await gitDirsUnder([box.ws])).includes(join(box.ws, "a/b/c/.git")));
    ok(!(await gitDirsUnder([box.ws], { maxDepth: 2 })).includes(join(box.ws, "a/b/c/.git")));
    deepEqual(await gitDirsUnder([box.ws], { maxEntries: 1 }), [join(box.ws, ".git")]);
  });
});

Deno.test("gitDirsUnder() finds a .git in a folder exactly maxDepth levels down, and 12 down", async () => {
  await withBox(async (box) => {
    await Deno.mkdir(join(box.ws, "a/b/c/.git"), { recursive: true });
    ok((await gitDirsUnder([box.ws], { maxDepth: 3 })).includes(join(box.ws, "a/b/c/.git")));
    const twelve = join(box.ws, ...Array.from({ length: 12 }, (_, i) => `${i}`));
    await Deno.mkdir(join(twelve, ".git"), { recursive: true });
    ok((await gitDirsUnder([box.ws])).includes(join(twelve, ".git")));
  });
});

Deno.test("gitDirsUnder() finds the repositories of packages in node_modules, scoped and nested", async () => {
  await withBox(async (box) => {
    const modules = join(box.ws, "app/node_modules");
    const repos = [
      join(modules, "dep/.git"),
      join(modules, "@scope/pkg/.git"),
      join(modules, "dep/node_modules/inner/.git"),
      join(modules, ".pnpm/x@1.0.0/node_modules/x/.git"),
    ];
    for (const repo of repos) await Deno.mkdir(repo, { recursive: true });
    // A package's own folders are not entered: a dependency tree holds too many files.
    await Deno.mkdir(join(modules, "dep/lib/vendored/.git"), { recursive: true });
    const found = await gitDirsUnder([box.ws]);
    for (const repo of repos) ok(found.includes(repo), `${repo} not in ${found}`);
    ok(!found.includes(join(modules, "dep/lib/vendored/.git")));
  });
});

Deno.test("gitDirsUnder() includes the repository folder a .git file points to inside a root", async () => {
  await withBox(async (box) => {
    await Deno.mkdir(join(box.ws, "store/repo"), { recursive: true });
    await Deno.mkdir(join(box.ws, "store/common"), { recursive: true });
    await Deno.writeTextFile(join(box.ws, "store/repo/commondir"), "../common\n");
    await Deno.mkdir(join(box.ws, "checkout"));
    await Deno.writeTextFile(join(box.ws, "checkout/.git"), "gitdir: ../store/repo\n");
    await Deno.mkdir(join(box.outside, "repo"));
    await Deno.mkdir(join(box.ws, "away"));
    await Deno.writeTextFile(join(box.ws, "away/.git"), `gitdir: ${join(box.outside, "repo")}\n`);
    deepEqual(await gitDirsUnder([box.ws]), [
      join(box.ws, ".git"),
      join(box.ws, "away/.git"),
      join(box.ws, "checkout/.git"),
      join(box.ws, "store/common"),
      join(box.ws, "store/repo"),
      join(box.ws, "sub/.git"),
      join(box.ws, "wt/.git"),
    ]);
  });
});

Deno.test("shellEnv() keeps the allowlist, forces SHELL and TMPDIR, drops injectors", () => {
  const env = shellEnv({
    PATH: "/bin",
    HOME: "/h",
    LANG: "C.UTF-8",
    LC_ALL: "C",
    TERM: "xterm",
    TZ: "UTC",
    USER: "me",
    SHELL: "/bin/zsh",
    TMPDIR: "/var/folders/x",
    OPENAI_API_KEY: "sk-x",
    LD_PRELOAD: "/evil.so",
    BASH_ENV: "/evil.sh",
    GIT_CONFIG_COUNT: "1",
    NODE_OPTIONS: "--require /evil.js",
    DENO_DIR: "/d",
  });
  deepEqual(env, {
    PATH: "/bin",
    HOME: "/h",
    LANG: "C.UTF-8",
    LC_ALL: "C",
    TERM: "xterm",
    TZ: "UTC",
    USER: "me",
    SHELL: "/bin/bash",
    TMPDIR: "/tmp",
  });
});

bwrapTest("createBwrapRunner() gives the command the plan's env, on no command line", async () => {
  await withBox(async (box) => {
    const secret = "granted-value-7f3a";
    const plan = await planFor(box);
    plan.env = { PATH: "/usr/bin:/bin", HOME: box.home, GRANTED: secret, LD_PRELOAD: "/x.so" };
    const command = "env | sort; tr '\\0' ' ' < /proc/1/cmdline";
    const result = await createBwrapRunner(plan)(command, { cwd: box.ws });
    equal(result.code, 0, result.output);
    const lines = result.output.split("\n");
    ok(lines.includes(`GRANTED=${secret}`) && lines.includes(`HOME=${box.home}`), result.output);
    ok(!result.output.includes("LD_PRELOAD"), result.output);
    const cmdline = lines.at(-1) ?? "";
    ok(cmdline.includes("bwrap") && !cmdline.includes(secret), cmdline);
    deepEqual(sandboxEnv(plan), { PATH: "/usr/bin:/bin", HOME: box.home, GRANTED: secret });
  });
});

bwrapTest("createBwrapRunner() starts bwrap with exactly bwrapArgs()", async () => {
  await withBox(async (box) => {
    const plan = await planFor(box);
    const command = "cat /proc/1/cmdline";
    const result = await createBwrapRunner(plan)(command, { cwd: join(box.ws, "sub") });
    equal(result.code, 0, result.output);
    const argv = result.output.split("\0").slice(0, -1);
    ok(argv[0].endsWith("bwrap"), argv[0]);
    deepEqual(argv.slice(1), bwrapArgs({ ...plan, cwd: join(box.ws, "sub") }, command));
  });
});

bwrapTest(
  "createBwrapRunner() reports a sandbox that cannot start as a failed command",
  async () => {
    await withBox(async (box) => {
      const plan = await planFor(box, { writable: [join(box.root, "missing")] });
      const result = await createBwrapRunner(plan)("echo ran", { cwd: box.ws });
      ok(result.code !== 0 && !result.output.includes("ran"), result.output);
    });
  },
);

Deno.test("createUnsandboxedRunner() runs bash with the given env minus injectors", async () => {
  await withBox(async (box) => {
    const run = createUnsandboxedRunner({ PATH: "/usr/bin:/bin", A: "1", LD_PRELOAD: "/x.so" });
    const result = await run("echo $A; echo ${LD_PRELOAD-none} >&2; pwd", { cwd: box.ws });
    deepEqual(
      { output: result.output, code: result.code },
      { output: `1\nnone\n${box.ws}\n`, code: 0 },
    );
  });
});

Deno.test("platformReason() says what confinement applies where bubblewrap cannot exist", () => {
  equal(platformReason("linux"), undefined);
  const mac = platformReason("darwin")!;
  match(mac, /only on Linux \(this is darwin\)/);
  match(mac, /Deno-confined worker/);
});

bwrapTest(
  "a sandboxed command does not start when tern's liveness pipe is at end-of-file",
  async () => {
    await withBox(async (box) => {
      const plan = await planFor(box);
      const launch = launchArgv(plan, bwrapArgs(plan, "touch ran"), "bwrap", { liveness: true });
      // The launcher moves stdin to the liveness descriptor: /dev/null is a tern that died
      // while the sandbox started.
      const start = (stdin: "null" | "piped") =>
        spawnLaunch(launch, plan, { stdin, stdout: "null" });
      const dead = await start("null").status;
      equal(dead.code, 137);
      ok(!(await exists(join(box.ws, "ran"))), "the command ran after tern died");
      // A pipe tern still holds: the command runs, and does not see the descriptor.
      const alive = start("piped");
      const status = await alive.status;
      await alive.stdin.close();
      equal(status.code, 0);
      ok(await exists(join(box.ws, "ran")), "the command did not run while tern lived");
    });
  },
);

bwrapTest(
  "a sandboxed command ends when tern dies after it started, even with bubblewrap's " +
    "--die-with-parent not armed (its init arms it only after it started the command)",
  async () => {
    await withBox(async (box) => {
      const plan = await planFor(box);
      const mark = marker();
      // The gap between the command's start and the init's arming, made permanent.
      const args = bwrapArgs(plan, `setsid sleep ${mark} & sleep ${mark}`)
        .filter((arg) => arg !== "--die-with-parent");
      const launch = launchArgv(plan, args, "bwrap", { liveness: true });
      // This process stands in for tern: it holds the liveness pipe's only write end.
      const child = spawnLaunch(launch, plan, { stdin: "piped", stdout: "null" });
      try {
        while (
          (await processesWith(`sleep ${mark}`)).filter((p) => p.startsWith("sleep")).length < 2
        ) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await child.stdin.close();
        const status = await child.status;
        ok(!status.success, `the sandbox ended with ${JSON.stringify(status)}`);
        await assertNoProcessWith(`sleep ${mark}`);
      } finally {
        try {
          child.kill("SIGKILL");
        } catch {
          // Ended.
        }
        await child.status;
      }
    });
  },
);

bwrapTest("a sandboxed command cannot see tern's liveness pipe", async () => {
  await withBox(async (box) => {
    const plan = await planFor(box);
    const result = await createBwrapRunner(plan)("ls /proc/self/fd; read -t 0 -u 9", {
      cwd: box.ws,
    });
    ok(!result.output.split("\n").includes("9"), result.output);
    ok(result.code !== 0, "fd 9 was readable in the command");
  });
});

/** Starts `launch` (from `launchArgv`) as tern would: from `/`, with the plan's environment alone. */
function spawnLaunch(
  launch: { program: string; args: string[] },
  plan: Parameters<typeof sandboxEnv>[0],
  stdio: { stdin: "null" | "piped"; stdout: "null" | "piped" },
): Deno.ChildProcess {
  return new Deno.Command(launch.program, {
    args: launch.args,
    cwd: "/",
    env: sandboxEnv(plan),
    clearEnv: true,
    ...stdio,
    stderr: "null",
  }).spawn();
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

bwrapTest(
  "a sandboxed program started without a liveness pipe keeps its stdin (an MCP server)",
  async () => {
    await withBox(async (box) => {
      const plan = await planFor(box);
      const launch = launchArgv(plan, bwrapArgvFor(plan, ["cat"]));
      const child = spawnLaunch(launch, plan, { stdin: "piped", stdout: "piped" });
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode("protocol line\n"));
      await writer.close();
      const out = await child.output();
      equal(new TextDecoder().decode(out.stdout), "protocol line\n");
    });
  },
);

Deno.test("bwrapArgvFor() binds no writable root that resolves elsewhere than when planned", async () => {
  await withBox(async (box) => {
    const granted = join(box.ws, "granted");
    await Deno.mkdir(granted);
    const plan = {
      cwd: box.ws,
      writable: [box.ws, granted],
      writableReal: { [box.ws]: box.ws, [granted]: granted },
      readOnly: [],
      hidden: [],
      limits: DEFAULT_LIMITS,
      network: false,
      env: { PATH: "/usr/bin:/bin" },
    };
    const binds = () => {
      const args = bwrapArgvFor(plan, ["true"]);
      return args.flatMap((arg, i) => arg === "--bind" ? [args[i + 1]] : []);
    };
    deepEqual(binds(), [box.ws, granted]);
    // A process replaced the granted folder by a link after the plan was built: binding it
    // would mount the link's target read-write.
    await Deno.rename(granted, join(box.ws, "moved"));
    await Deno.symlink(box.outside, granted);
    deepEqual(binds(), [box.ws]);
  });
});
