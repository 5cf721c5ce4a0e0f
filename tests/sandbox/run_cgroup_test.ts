/**
 * The runs' cgroups: the caps they set hold for a process that joins them, and a sweep removes
 * only those of dead runs that share its tmp folder.
 */
import { deepEqual, equal, match, notEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import {
  makeRunCgroup,
  removeStaleRunCgroups,
  runCgroupPrefix,
} from "../../src/sandbox/run_cgroup.ts";

const CAPS = { processes: 64, memoryBytes: 128 * 1024 * 1024 };

Deno.test("runCgroupPrefix() differs by tmp folder and names only safe characters", () => {
  match(runCgroupPrefix("/tmp"), /^tern-[0-9a-f]{8}-$/);
  equal(runCgroupPrefix("/tmp"), runCgroupPrefix("/tmp"));
  notEqual(runCgroupPrefix("/tmp"), runCgroupPrefix("/var/tmp/box"));
});

Deno.test("removeStaleRunCgroups() keeps a live run's cgroups whose tmp folder is elsewhere", async () => {
  const mine = await Deno.makeTempDir({ prefix: "tern-cg-a-" });
  const other = await Deno.makeTempDir({ prefix: "tern-cg-b-" });
  const name = `tern-tmp-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.mkdir(join(other, name));
  const live = await makeRunCgroup(runCgroupPrefix(other) + name, CAPS);
  try {
    if (live === null) return; // No cgroup can be made here: nothing to sweep either.
    // A run whose tmp folders are in `mine` sweeps: the other run's folder is not there, and
    // its cgroups must stay.
    deepEqual(await removeStaleRunCgroups(runCgroupPrefix(mine), mine), []);
    for (const path of live.paths) ok(await exists(path), `${path} is still there`);
    // Its own sweep removes them once its tmp folder is gone.
    await Deno.remove(join(other, name));
    deepEqual(
      (await removeStaleRunCgroups(runCgroupPrefix(other), other)).sort(),
      [...live.paths].sort(),
    );
  } finally {
    await live?.remove();
    await Deno.remove(mine, { recursive: true });
    await Deno.remove(other, { recursive: true });
  }
});

Deno.test("a process that joins a run's cgroups is held to their memory and process caps", async () => {
  const live = await makeRunCgroup(`tern-test-${crypto.randomUUID().slice(0, 8)}`, CAPS);
  if (live === null) return; // Not root, or no cgroup tree to write here.
  try {
    const joins = live.joinFiles.map((file) => `echo 0 >'${file}'`).join("; ");
    const run = async (program: string) => {
      const out = await new Deno.Command("bash", {
        args: ["-c", `${joins}; /usr/bin/python3 -c '${program}'; echo "exit=$?"`],
        stdout: "piped",
        stderr: "piped",
      }).output();
      return new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    };
    if (live.memoryBytes !== undefined) {
      equal(live.memoryBytes, CAPS.memoryBytes);
      // 400 MiB written page by page: past the cap the kernel kills the process (SIGKILL).
      const output = await run('x = b"\\1" * (400 << 20); print("held")');
      ok(!/^held$/m.test(output), output);
      match(output, /exit=137/);
      // Under the cap all goes on as usual.
      match(await run('x = b"\\1" * (16 << 20); print("held")'), /held\nexit=0/);
    }
    if (live.processes !== undefined) {
      equal(live.processes, CAPS.processes);
      const forks = "import os\nn=0\ntry:\n  for _ in range(200):\n    if os.fork()==0:\n" +
        "      import time; time.sleep(2); os._exit(0)\n    n+=1\nexcept OSError: pass\nprint(n)";
      const started = Number((await run(forks)).split("\n")[0]);
      ok(started < CAPS.processes, `${started} processes started`);
    }
  } finally {
    await new Promise((resolve) => setTimeout(resolve, 2500));
    await live.remove();
  }
  for (const path of live.paths) equal(await exists(path), false, `${path} was removed`);
});

Deno.test("a run's memory cap is never more than three quarters of the machine's memory", async () => {
  // A setting past what bash's 64-bit arithmetic holds is lowered too, never overflowed.
  for (const memoryBytes of [Number.MAX_SAFE_INTEGER, 1e30]) {
    const live = await makeRunCgroup(`tern-test-${crypto.randomUUID().slice(0, 8)}`, {
      processes: 64,
      memoryBytes,
    });
    try {
      if (live?.memoryBytes === undefined) return;
      equal(live.memoryBytes, Deno.systemMemoryInfo().total * 3 / 4);
      // The kernel holds that cap, socket buffers included under cgroup v1.
      for (const path of live.paths.filter((path) => path.includes("/memory/"))) {
        const cap: number = live.memoryBytes;
        const wanted: [string, number][] = [
          ["memory.limit_in_bytes", cap],
          ["memory.kmem.tcp.limit_in_bytes", Math.floor(cap / 4)],
        ];
        for (const [file, bytes] of wanted) {
          const read = await new Deno.Command("cat", { args: [`${path}/${file}`] }).output();
          if (!read.success) continue;
          const set = Number(new TextDecoder().decode(read.stdout).trim());
          // The kernel rounds a limit down to whole pages.
          ok(Math.abs(set - bytes) < 4096, `${file}: ${set}`);
        }
      }
    } finally {
      await live?.remove();
    }
  }
});

/** Through `test -d`: Deno reads nothing under /sys without --allow-all. */
async function exists(path: string): Promise<boolean> {
  return (await new Deno.Command("test", { args: ["-d", path] }).output()).success;
}

Deno.test("under cgroup v1 a run's memory cap is never more than three quarters of tern's own cgroup's limit", async () => {
  // A parent cgroup with a 400 MiB limit stands for a container; a Deno process started inside
  // it makes a run's cgroups as tern would.
  const parent = `/sys/fs/cgroup/memory/tern-test-parent-${crypto.randomUUID().slice(0, 8)}`;
  const made = await new Deno.Command("bash", {
    args: ["-c", `mkdir "${parent}" && echo $((400 << 20)) >"${parent}/memory.limit_in_bytes"`],
    stderr: "null",
  }).output();
  if (!made.success) return; // No cgroup v1 memory tree to write here.
  const script = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    const module = new URL("../../src/sandbox/run_cgroup.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { makeRunCgroup } from "${module}";\n` +
        `const run = await makeRunCgroup("tern-test-child-${crypto.randomUUID().slice(0, 8)}", ` +
        `{ processes: 64, memoryBytes: 2 ** 40 });\n` +
        `console.log(JSON.stringify({ memory: run?.memoryBytes, paths: run?.paths }));\n` +
        `await run?.remove();\n`,
    );
    const out = await new Deno.Command("bash", {
      args: [
        "-c",
        `echo 0 >"${parent}/tasks" && exec "$0" run -A --no-config "$1"`,
        Deno.execPath(),
        script,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    equal(out.success, true, new TextDecoder().decode(out.stderr));
    const seen = JSON.parse(text) as { memory?: number; paths?: string[] };
    equal(seen.memory, (400 << 20) / 4 * 3, text);
    ok(seen.paths?.some((path) => path.startsWith(`${parent}/`)), text);
  } finally {
    await Deno.remove(script);
    await new Deno.Command("rmdir", { args: [parent], stderr: "null" }).output();
  }
});
