/**
 * Without a sandbox (`--no-sandbox`, `:danger-full-access`) a command that leaves its process
 * group (`setsid`, a double fork into a new session) must still end with the command: on its
 * own end, on a timeout and on a cancel.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { assertNoProcessWith, killWith, marker } from "./_bwrap_helpers.ts";
import { safeEnv } from "../../src/sandbox/process.ts";
import {
  type Containment,
  createUnsandboxedRunner,
  findContainment,
  UNCONTAINED_NOTE,
} from "../../src/sandbox/shell_runner.ts";

/**
 * Runs `body` in a fresh folder with a marker (`sleep <marker>` is a process of its own, found by
 * its command line on the host whatever pid namespace it is in), killing what it left.
 */
async function withMarker(body: (dir: string, mark: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tern-escape-" });
  const mark = marker();
  try {
    await body(dir, mark);
  } finally {
    await killWith(`sleep ${mark}`);
    await Deno.remove(dir, { recursive: true });
  }
}

/** Starts `sleep <mark>` in a session of its own. */
const escape = (mark: string) => `setsid sleep ${mark} </dev/null >/dev/null 2>&1 &`;
/** The same, twice removed: its parent is gone before the command ends. */
const doubleFork = (mark: string) => `( setsid sleep ${mark} & ) </dev/null >/dev/null 2>&1;`;
/** Waits until `sleep <mark>` runs. */
const wait = (mark: string) => `until pgrep -f "^sleep ${mark}" >/dev/null; do sleep 0.02; done`;

const found = await findContainment();
const kinds: [string, Promise<Containment>][] = [["found", Promise.resolve(found)]];
if (found.kind === "cgroup") {
  // The fallback where no cgroup can be made, when this machine has unshare for this user.
  const { success } = await new Deno.Command("/usr/bin/unshare", {
    args: ["--pid", "--fork", "--kill-child", "true"],
    stderr: "null",
  }).output().catch(() => ({ success: false }));
  if (success) {
    kinds.push([
      "pid-namespace",
      Promise.resolve({ kind: "pid-namespace", unshare: "/usr/bin/unshare" }),
    ]);
  }
}

/** Fails when a command cgroup whose name starts with `prefix` is left (after a while). */
async function assertNoCgroupLeft(prefix: string): Promise<void> {
  if (found.kind !== "cgroup") return;
  let left: string[] = [];
  for (let tries = 0; tries < 40; tries++) {
    // By `ls`: Deno reads nothing under /sys without every permission.
    const ls = await new Deno.Command("ls", { args: [found.base] }).output();
    left = new TextDecoder().decode(ls.stdout).split("\n").filter((name) =>
      name.startsWith(prefix)
    );
    if (left.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  deepEqual(left, [], `cgroups were left in ${found.base}`);
}

for (const [kind, containment] of kinds) {
  const run = createUnsandboxedRunner(safeEnv(), { containment });

  for (const [name, start] of [["setsid", escape], ["double fork", doubleFork]] as const) {
    Deno.test(`createUnsandboxedRunner() (${kind}) ends a ${name} process when the command ends`, async () => {
      await withMarker(async (dir, mark) => {
        const result = await run(`${start(mark)} ${wait(mark)}; echo started`, { cwd: dir });
        equal(result.output, "started\n");
        await assertNoProcessWith(`sleep ${mark}`);
        await assertNoCgroupLeft(`tern-cmd-${Deno.pid}-`);
      });
    });
  }

  Deno.test(`createUnsandboxedRunner() (${kind}) ends a setsid process on timeout`, async () => {
    await withMarker(async (dir, mark) => {
      const result = await run(`${escape(mark)} ${wait(mark)}; sleep 30`, {
        cwd: dir,
        timeoutMs: 500,
      });
      ok(result.timedOut);
      await assertNoProcessWith(`sleep ${mark}`);
    });
  });

  Deno.test(`createUnsandboxedRunner() (${kind}) ends a setsid process that ignores SIGTERM on cancel`, async () => {
    await withMarker(async (dir, mark) => {
      const controller = new AbortController();
      const hardy = `setsid bash -c 'trap "" TERM; sleep ${mark}; sleep ${mark}' ` +
        `</dev/null >/dev/null 2>&1 &`;
      const result = await run(`${hardy} ${wait(mark)}; echo up; sleep 30`, {
        cwd: dir,
        signal: controller.signal,
        onOutput: (text) => text.includes("up") && controller.abort(),
      });
      ok(result.cancelled);
      await assertNoProcessWith(`sleep ${mark}`);
    });
  });

  Deno.test(`createUnsandboxedRunner() (${kind}) ends a setsid process when tern is killed`, async () => {
    await withMarker(async (dir, mark) => {
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--no-prompt",
          "--allow-read",
          "--allow-write",
          "--allow-env",
          "--allow-run",
          "--allow-sys",
          new URL("./_unsandboxed_child.ts", import.meta.url).pathname,
          `${escape(mark)} ${wait(mark)}; echo up; sleep 30`,
          kind === "found" ? "found" : "pid-namespace",
        ],
        cwd: dir,
        stdout: "piped",
        stderr: "null",
      }).spawn();
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let seen = "";
      while (!seen.includes("up")) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += value;
      }
      equal(seen, "up\n");
      child.kill("SIGKILL");
      await child.status;
      await reader.cancel();
      await assertNoProcessWith(`sleep ${mark}`);
      await assertNoCgroupLeft(`tern-cmd-${child.pid}-`);
    });
  });

  Deno.test(`createUnsandboxedRunner() (${kind}) still reports the command's exit code`, async () => {
    await withMarker(async (dir) => {
      const result = await run("echo hi; exit 7", { cwd: dir });
      equal(result.output, "hi\n");
      equal(result.code, 7);
    });
  });
}

Deno.test("findContainment() finds a cgroup where tern may make one in the cgroup v2 tree", async () => {
  const writable = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"].some((dir) => {
    try {
      return Deno.statSync(`${dir}/cgroup.controllers`).isFile && Deno.uid() === 0;
    } catch {
      return false;
    }
  });
  if (!writable) return;
  const found = await findContainment();
  equal(found.kind, "cgroup");
});

Deno.test("createUnsandboxedRunner() says once when nothing can keep a command's processes", async () => {
  await withMarker(async (dir) => {
    const run = createUnsandboxedRunner(safeEnv(), {
      containment: Promise.resolve({ kind: "none" }),
    });
    const seen: string[] = [];
    const first = await run("echo one", { cwd: dir, onOutput: (text) => seen.push(text) });
    equal(first.output, `one\n\n[tern: ${UNCONTAINED_NOTE}]\n`);
    ok(seen.join("").includes(UNCONTAINED_NOTE));
    const second = await run("echo two", { cwd: dir });
    equal(second.output, "two\n");
  });
});

Deno.test("createUnsandboxedRunner() runs no command whose cgroup cannot be made", async () => {
  await withMarker(async (dir) => {
    const run = createUnsandboxedRunner(safeEnv(), {
      containment: Promise.resolve({ kind: "cgroup", base: `${dir}/no/such` }),
    });
    const result = await run("touch ran", { cwd: dir });
    equal(result.code, 126);
    equal(
      result.output,
      `tern: Cannot run the command in a cgroup of its own: "${dir}/no/such/` +
        result.output.split(`${dir}/no/such/`)[1],
    );
    match(result.output, /^[^\n]*" cannot be made or joined; the command did not run\n$/);
    ok(!(await Deno.stat(`${dir}/ran`).then(() => true, () => false)), "the command ran");
  });
});
