/**
 * The warm shell (src/sandbox/warm_shell.ts) against real bubblewrap: one sandbox for commands
 * one after another, each as clean as a fresh sandbox, a server commands cannot reach, and
 * nothing left behind when tern dies. (The adversarial suites run through it too: attackTest.)
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import {
  openWarmShell,
  WARM_SERVER_SCRIPT,
  warmServerFile,
  WarmSlot,
} from "../../src/sandbox/warm_shell.ts";
import { bwrapArgvFor } from "../../src/sandbox/bwrap.ts";
import {
  assertNoProcessWith,
  type Box,
  bwrapTest,
  exists,
  marker,
  planFor,
  processesWith,
  withBox,
  withTestSandbox,
} from "./_bwrap_helpers.ts";
import type { ShellPlan } from "../../src/sandbox/types.ts";
import { createSandbox } from "../../src/sandbox/runtime.ts";

/** Host pids of the bubblewrap processes whose command line has `text` (a warm shell's folder). */
async function bwrapPids(text: string): Promise<string[]> {
  const ps = await new Deno.Command("ps", { args: ["-eo", "pid=,stat=,args="] }).output();
  return new TextDecoder().decode(ps.stdout).split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, stat, program, ...rest]) =>
      stat !== undefined && !stat.startsWith("Z") && program?.split("/").at(-1) === "bwrap" &&
      rest.join(" ").includes(text)
    )
    .map(([pid]) => pid).sort();
}

async function withSlot(fn: (slot: WarmSlot, box: Box, plan: ShellPlan) => Promise<void>) {
  await withBox(async (box) => {
    const plan = await planFor(box);
    const slot = new WarmSlot(box.tmp);
    try {
      await fn(slot, box, plan);
    } finally {
      await slot.close();
    }
  });
}

bwrapTest("WarmSlot.run() runs commands one after another in one sandbox", async () => {
  await withSlot(async (slot, box, plan) => {
    const first = await slot.run(plan, "echo err >&2; pwd; exit 3", { cwd: join(box.ws, "sub") });
    const sandboxes = await bwrapPids(box.tmp);
    const second = await slot.run(plan, "echo two", { cwd: box.ws });
    deepEqual(
      [first?.output, first?.code, second?.output, second?.code],
      [`err\n${join(box.ws, "sub")}\n`, 3, "two\n", 0],
    );
    equal(sandboxes.length, 1);
    deepEqual(await bwrapPids(box.tmp), sandboxes, "the second command ran in another sandbox");
  });
});

bwrapTest(
  "WarmSlot.run() takes the prewarmed sandbox while bubblewrap still sets it up",
  async () => {
    await withBox(async (box) => {
      const guard = join(box.ws, ".tern");
      const plan = await planFor(box, { guarded: [guard] });
      const slot = new WarmSlot(box.tmp);
      try {
        await slot.prewarm(plan);
        // At once: the guards' mount points may not be made yet by bubblewrap.
        const result = await slot.run(plan, "echo hi", { cwd: box.ws });
        equal(result?.output, "hi\n");
        deepEqual(slot.released(), [], "the prewarmed sandbox was given up for a new one");
        ok(slot.holds(guard));
      } finally {
        await slot.close();
      }
    });
  },
);

bwrapTest(
  "WarmSlot.prewarm() makes the guards' mount points in a process that may not write the workspace",
  async () => {
    await withBox(async (box) => {
      const guard = join(box.ws, ".tern");
      const plan = await planFor(box, { guarded: [guard] });
      const planFile = join(box.tmp, "plan.json");
      await Deno.writeTextFile(planFile, JSON.stringify(plan));
      // Only tern's own folder writable, as bin/tern starts tern: Deno.mkdir in the workspace
      // is refused, so the mount point has to be made another way before bubblewrap runs.
      const child = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--no-prompt",
          "--allow-read",
          `--allow-write=${box.tmp}`,
          "--allow-run",
          "--allow-env",
          new URL("./_warm_slot_child.ts", import.meta.url).pathname,
          planFile,
          box.tmp,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(child.stderr);
      ok(child.success, stderr);
      const seen = JSON.parse(new TextDecoder().decode(child.stdout));
      deepEqual(seen, { output: "hi\n", released: [], held: [guard] });
    });
  },
);

bwrapTest(
  "WarmSlot.run() called while the prewarmed shell is being opened runs in that shell",
  async () => {
    await withBox(async (box) => {
      const guard = join(box.ws, ".tern");
      const plan = await planFor(box, { guarded: [guard] });
      const slot = new WarmSlot(box.tmp);
      try {
        // Not awaited: the command comes while the prewarm still makes the shell.
        const prewarming = slot.prewarm(plan);
        // Null: the slot gave it up, for a one-shot sandbox.
        const result = await slot.run(plan, "echo one", { cwd: box.ws });
        await prewarming;
        const sandboxes = await bwrapPids(box.tmp);
        const second = await slot.run(plan, "echo two", { cwd: box.ws });
        equal(result?.output, "one\n", "the command was given to a one-shot sandbox");
        equal(second?.output, "two\n");
        equal(sandboxes.length, 1);
        deepEqual(slot.released(), []);
      } finally {
        await slot.close();
      }
    });
  },
);

bwrapTest("WarmSlot.run(): no process a command started lives on into the next one", async () => {
  await withSlot(async (slot, box, plan) => {
    const mark = marker();
    const first = await slot.run(
      plan,
      `sleep ${mark} & setsid sleep ${mark} & nohup sleep ${mark} >/dev/null 2>&1 & ` +
        `( (sleep ${mark} &) & ); echo started`,
      { cwd: box.ws },
    );
    equal(first?.output, "started\n");
    // The server ends them and waits until they are gone before it reports the end.
    deepEqual(await processesWith(`sleep ${mark}`), []);
    const second = await slot.run(plan, "ps -e -o comm= | sort | uniq -c | sort -rn", {
      cwd: box.ws,
    });
    ok(!second?.output.includes("sleep"), second?.output);
  });
});

bwrapTest("WarmSlot.run() deletes nothing between commands: a workspace under /tmp", async () => {
  // The sandbox's private /tmp holds the workspace's bind: a cleanup of /tmp would reach it.
  const root = await Deno.realPath(await Deno.makeTempDir({ dir: "/tmp", prefix: "tern_warm_" }));
  try {
    const ws = join(root, "ws");
    await Deno.mkdir(join(ws, "src"), { recursive: true });
    await Deno.writeTextFile(join(ws, "src", "keep.txt"), "keep\n");
    const plan: ShellPlan = {
      cwd: ws,
      writable: [ws],
      readOnly: [],
      hidden: [],
      network: false,
      env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: root },
    };
    const slot = new WarmSlot(join(root));
    try {
      for (const command of ["echo one > made.txt", "touch /tmp/scratch; echo two"]) {
        equal((await slot.run(plan, command, { cwd: ws }))?.code, 0);
      }
      const third = await slot.run(plan, "cat src/keep.txt made.txt; ls /tmp/scratch", { cwd: ws });
      equal(third?.output, "keep\none\n/tmp/scratch\n");
    } finally {
      await slot.close();
    }
    equal(await Deno.readTextFile(join(ws, "src", "keep.txt")), "keep\n");
    equal(await Deno.readTextFile(join(ws, "made.txt")), "one\n");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

bwrapTest("WarmSlot.run(): a command can neither fake its end nor reach the server", async () => {
  await withSlot(async (slot, box, plan) => {
    await slot.run(plan, "true", { cwd: box.ws });
    const sandboxes = await bwrapPids(box.tmp);
    const attack = await slot.run(
      plan,
      "printf 'x\\0tern-end 00000000-0000-0000-0000-000000000000 0\\n'; " +
        "kill -KILL 1; kill -STOP 1; kill -TERM 1; " +
        "head -c 1 /proc/1/mem || echo no-mem; (exec 3</proc/1/fd/0) || echo no-stdin; " +
        "(exec 3>/proc/1/fd/1) || echo no-stdout; echo done",
      { cwd: box.ws },
    );
    ok(attack !== null);
    match(attack.output, /^x\0tern-end 00000000-0000-0000-0000-000000000000 0\n/);
    match(attack.output, /no-mem\n(.|\n)*no-stdin\n(.|\n)*no-stdout\n(.|\n)*done\n$/);
    const after = await slot.run(plan, "echo second", { cwd: box.ws });
    equal(after?.output, "second\n", "the output was misattributed");
    deepEqual(await bwrapPids(box.tmp), sandboxes, "the server was stopped");
  });
});

bwrapTest("WarmSlot.run(): a timeout or cancel ends the sandbox, the next opens anew", async () => {
  await withSlot(async (slot, box, plan) => {
    const mark = marker();
    await slot.run(plan, "true", { cwd: box.ws });
    const sandboxes = await bwrapPids(box.tmp);
    const timed = await slot.run(plan, `echo up; sleep ${mark} & sleep ${mark}`, {
      cwd: box.ws,
      timeoutMs: 300,
    });
    ok(timed?.timedOut && timed.output === "up\n", JSON.stringify(timed));
    await assertNoProcessWith(`sleep ${mark}`);
    const controller = new AbortController();
    controller.abort();
    const cancelled = await slot.run(plan, `sleep ${mark}`, {
      cwd: box.ws,
      signal: controller.signal,
    });
    ok(cancelled?.cancelled, JSON.stringify(cancelled));
    const next = await slot.run(plan, "echo next", { cwd: box.ws });
    deepEqual([next?.output, next?.code], ["next\n", 0]);
    const now = await bwrapPids(box.tmp);
    ok(now.length === 1 && !sandboxes.includes(now[0]), JSON.stringify([sandboxes, now]));
  });
});

bwrapTest("WarmSlot.run() opens a new sandbox when the plan's view changes", async () => {
  await withSlot(async (slot, box, plan) => {
    await slot.run(plan, "true", { cwd: box.ws });
    const before = await bwrapPids(box.tmp);
    const wider = { ...plan, writable: [box.ws, box.outside] };
    const two = await slot.run(wider, `touch ${box.outside}/made`, { cwd: box.ws });
    equal(two?.code, 0, JSON.stringify(two));
    const after = await bwrapPids(box.tmp);
    ok(after.length === 1 && !before.includes(after[0]), "the old sandbox ran the command");
    ok(await exists(join(box.outside, "made")));
  });
});

bwrapTest("WarmSlot.run() sends a command to a one-shot sandbox while it is busy", async () => {
  await withSlot(async (slot, box, plan) => {
    await slot.run(plan, "true", { cwd: box.ws });
    const slow = slot.run(plan, "sleep 0.5; echo slow", { cwd: box.ws });
    // The first command holds the warm shell until it ends: this one is not for it.
    const other = await slot.run(plan, "echo other", { cwd: box.ws });
    equal(other, null);
    equal((await slow)?.output, "slow\n");
  });
});

bwrapTest("the warm shell's server refuses to run unless it is pid 1", async () => {
  await withBox(async (box) => {
    const mark = marker();
    const plan = await planFor(box);
    // pid 2 under bubblewrap's own init, beside a process the server must not kill.
    const script = `sleep ${mark} & bash -c "$1"; echo "server $?"; kill -0 $! && echo alive`;
    const args = bwrapArgvFor(plan, ["bash", "-c", script, "sh", WARM_SERVER_SCRIPT]);
    const out = await new Deno.Command("bwrap", { args, stdin: "null", stderr: "piped" })
      .output();
    const text = new TextDecoder().decode(out.stdout);
    equal(text, "server 1\nalive\n");
    match(new TextDecoder().decode(out.stderr), /must run as pid 1/);
    await assertNoProcessWith(mark);
  });
});

bwrapTest("the warm shell ends with tern, idle or mid-command", async () => {
  for (const midCommand of [false, true]) {
    await withBox(async (box) => {
      const mark = marker();
      const plan = await planFor(box);
      const code = `
        import { openWarmShell, warmServerFile } from ${JSON.stringify(warmShellUrl)};
        const plan = ${JSON.stringify(plan)};
        const shell = openWarmShell(plan, { serverFile: await warmServerFile(${
        JSON.stringify(box.tmp)
      }) });
        await shell.run("echo ready", { cwd: plan.cwd });
        console.log("ready");
        if (${midCommand}) await shell.run("sleep ${mark}", { cwd: plan.cwd });
        await new Promise(() => setInterval(() => {}, 1000));
      `;
      const child = new Deno.Command(Deno.execPath(), {
        args: ["eval", "--no-check", code],
        stdout: "piped",
        stderr: "inherit",
      }).spawn();
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let seen = "";
      while (!seen.includes("ready")) seen += (await reader.read()).value ?? "";
      if (midCommand) {
        while ((await processesWith(`sleep ${mark}`)).length === 0) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
      ok((await processesWith(box.tmp)).length > 0, "no warm shell ran");
      child.kill("SIGKILL");
      await child.status;
      await reader.cancel();
      await assertNoProcessWith(box.tmp);
      await assertNoProcessWith(`sleep ${mark}`);
    });
  }
});

const warmShellUrl = new URL("../../src/sandbox/warm_shell.ts", import.meta.url).href;

bwrapTest("warmServerFile() makes an unreadable copy of bash once", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = await warmServerFile(dir);
    const info = await Deno.stat(path);
    equal((info.mode ?? 0) & 0o7777, 0o111);
    equal(await warmServerFile(dir), path);
    equal((await Deno.stat(path)).ino, info.ino, "a valid copy was made again");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

bwrapTest("the sandbox's warm shell keeps its .tern guard when the placeholder goes", async () => {
  await withTestSandbox({ name: "warm_guard" }, async (sandbox, ws) => {
    const run = (command: string) => sandbox.shell(command, { cwd: ws, timeoutMs: 30_000 });
    await run("true");
    const first = await bwrapPids(sandbox.ternHome);
    equal(first.length, 1, "no warm shell was kept");
    // The guard's mount point on the host stays while the warm shell lives.
    ok(await exists(join(ws, ".tern")), "the placeholder was removed under the warm shell");
    await run("true");
    deepEqual(await bwrapPids(sandbox.ternHome), first, "the warm shell was not kept");
    // Someone removes the empty folder: inside, the guard would be unmounted with it.
    await Deno.remove(join(ws, ".tern"));
    const made = await run("mkdir -p .tern/x && echo made");
    ok(!made.output.includes("made"), made.output);
    equal(await exists(join(ws, ".tern", "x")), false);
    const now = await bwrapPids(sandbox.ternHome);
    ok(now.length === 1 && now[0] !== first[0], "the shell whose guard was gone ran it");
  });
});

bwrapTest(
  "openWarmShell() reports a sandbox that cannot start as the command's failure",
  async () => {
    await withBox(async (box) => {
      const plan = await planFor(box, { cwd: join(box.ws, "missing") });
      const shell = openWarmShell(plan, { serverFile: await warmServerFile(box.tmp) });
      const result = await shell.run("echo hi", { cwd: box.ws });
      ok(result.code !== 0, JSON.stringify(result));
      match(result.output, /missing/);
      equal(shell.ready, false);
      await shell.close();
    });
  },
);

bwrapTest(
  "the sandbox's warm shell is kept when the .git search finds its own guard's mount point",
  async () => {
    await withTestSandbox({ name: "warm_own_guard" }, async (sandbox, ws) => {
      const run = (command: string) => sandbox.shell(command, { cwd: ws, timeoutMs: 30_000 });
      // No .git in the workspace: the warm shell guards one, on an empty folder made for it.
      equal((await run("echo one > a.txt && echo ran")).output, "ran\n");
      const first = await bwrapPids(sandbox.ternHome);
      equal(first.length, 1, "no warm shell was kept");
      ok(await exists(join(ws, ".git")), "no mount point was made for the .git guard");
      // What the bash tool does after a command that may have changed the tree: the search
      // now finds that empty .git, read-only in the kept shell already.
      sandbox.shellTreeChanged();
      equal((await run("echo two > a.txt && echo ran")).output, "ran\n");
      deepEqual(await bwrapPids(sandbox.ternHome), first, "the warm shell was replaced");
      sandbox.shellTreeChanged();
      equal((await run("echo three > a.txt && echo ran")).output, "ran\n");
      deepEqual(await bwrapPids(sandbox.ternHome), first, "the warm shell was replaced later");
      equal((await run("mkdir .git/hooks 2>/dev/null || echo refused")).output, "refused\n");
    });
  },
);

bwrapTest(
  "the sandbox opens no warm shell until asked (prewarmShell) or a command runs",
  async () => {
    await withTestSandbox({ name: "warm_asked" }, async (sandbox, ws) => {
      // A run of file tools alone never starts one.
      await new Promise((done) => setTimeout(done, 200));
      deepEqual(await bwrapPids(sandbox.ternHome), [], "the opening started a warm shell");
      sandbox.prewarmShell();
      let opened: string[] = [];
      // Up to 10 s: on a loaded machine the plan and bubblewrap's start take a while. Two
      // bubblewrap processes show while it sets up (its child between clone and exec); the
      // one that stays is the outer, whose pid a command must find again below.
      for (let i = 0; i < 500 && opened.length !== 1; i++) {
        await new Promise((done) => setTimeout(done, 20));
        opened = await bwrapPids(sandbox.ternHome);
      }
      equal(opened.length, 1, `prewarmShell() opened no warm shell: ${opened.length} found`);
      sandbox.prewarmShell();
      const result = await sandbox.shell("echo hi", { cwd: ws, timeoutMs: 30_000 });
      equal(result.output, "hi\n");
      deepEqual(
        await bwrapPids(sandbox.ternHome),
        opened,
        "the command did not use the warm shell",
      );
    });
  },
);

bwrapTest("the sandbox's warm shell is replaced when a command made a repository", async () => {
  await withTestSandbox({ name: "warm_repo" }, async (sandbox, ws) => {
    const run = (command: string) => sandbox.shell(command, { cwd: ws, timeoutMs: 30_000 });
    equal((await run("mkdir -p repo/.git/hooks && echo made")).output, "made\n");
    // What the bash tool does after a command that may have changed the tree.
    sandbox.shellTreeChanged();
    const hook = await run("echo evil > repo/.git/hooks/pre-commit && echo written");
    ok(!hook.output.includes("written"), hook.output);
    equal(await exists(join(ws, "repo/.git/hooks/pre-commit")), false);
  });
});

bwrapTest("createSandbox() given up while it opens leaves no warm shell behind", async () => {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_abort_" }),
  );
  try {
    const ws = join(root, "ws");
    await Deno.mkdir(ws);
    const ternHome = join(root, "tern-home");
    const open = (runId: string, signal?: AbortSignal) =>
      createSandbox({
        workspace: ws,
        profile: ":workspace",
        noSandbox: false,
        ternHome,
        env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: root },
        home: root,
        handlerUrl: new URL("../../src/tools/worker_handler.ts", import.meta.url),
        runId,
        signal,
      });
    const started = performance.now();
    await (await open("whole")).close();
    const whole = performance.now() - started;
    // Given up at every point of the opening, from before it starts to after it is done.
    for (let step = 0; step <= 24; step++) {
      const controller = new AbortController();
      const opening = open(`abort-${step}`, controller.signal);
      setTimeout(() => controller.abort(), (whole * step) / 20);
      // Opened anyway (the abort came late): its owner closes it, as a conversation does.
      await opening.then((sandbox) => sandbox.close(), () => {});
    }
    await assertNoProcessWith(ternHome);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

bwrapTest(
  "WarmSlot never reuses a sandbox whose hidden file the host replaced (an editor's save)",
  async () => {
    await withBox(async (box) => {
      const secret = join(box.ws, ".env");
      await Deno.writeTextFile(secret, "TOKEN=old\n");
      const plan = await planFor(box, { hidden: [secret] });
      const slot = new WarmSlot(box.tmp);
      try {
        const before = await slot.run(plan, "cat .env 2>&1; echo read", { cwd: box.ws });
        ok(!before?.output.includes("TOKEN"), before?.output);
        const sandboxes = await bwrapPids(box.tmp);
        // Saved as editors save: a new file renamed over the old one. In the sandbox kept
        // open, the mount over `.env` went with the old file.
        await Deno.writeTextFile(`${secret}.tmp`, "TOKEN=new\n");
        await Deno.rename(`${secret}.tmp`, secret);
        const after = await slot.run(plan, "cat .env 2>&1; echo read", { cwd: box.ws });
        ok(!after?.output.includes("TOKEN"), after?.output);
        const now = await bwrapPids(box.tmp);
        equal(now.length, 1);
        ok(!now.includes(sandboxes[0]), "the kept sandbox ran the second command");
      } finally {
        await slot.close();
      }
    });
  },
);
