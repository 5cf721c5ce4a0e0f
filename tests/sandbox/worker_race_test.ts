/**
 * The race suite: a real process swaps a workspace folder with a symlink to outside using
 * `renameat2(RENAME_EXCHANGE)` (one atomic system call, as fast as it can) while read, write,
 * edit, list, glob and grep run through the real tool worker. Nothing outside may be read or
 * written, and no temporary file may be left anywhere.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { createHash } from "node:crypto";
import { join, relative } from "node:path";
import type { Observation } from "../../src/core/observation.ts";
import { createSandbox, type SandboxRuntime } from "../../src/sandbox/runtime.ts";
import { bwrap, withBox } from "./_bwrap_helpers.ts";
import type { Grants } from "../../src/sandbox/types.ts";

/** Content of the files outside, which must never appear in a result. */
const SECRET = "TOP-SECRET-OUTSIDE";
/** Content of the file outside that writes and edits aim at. */
const TARGET = "TARGET-OUTSIDE-UNCHANGED\n";
/** A name only the outside folder has. */
const OUTSIDE_NAME = "only-outside-secret-name.txt";

/** renameat2's system call number per machine; the flipper calls it through ctypes. */
const RENAMEAT2: Record<string, number> = { x86_64: 316, aarch64: 276 };

/**
 * Exchanges the two names it is given (a folder or file, and a symlink to outside) in its cwd
 * in a loop, checking stdin every 200 swaps, so it ends with both back in place.
 */
const FLIPPER = `
import ctypes, os, select, sys
libc = ctypes.CDLL(None, use_errno=True)
nr = {"x86_64": 316, "aarch64": 276}[os.uname().machine]
a, b = (name.encode() for name in sys.argv[1:3])
def swap():
    if libc.syscall(nr, -100, a, -100, b, 2) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")
print("ready", flush=True)
n = 0
while not select.select([sys.stdin], [], [], 0)[0]:
    for _ in range(200):
        swap()
        n += 1
print("swaps", n, flush=True)
`;

const python = await new Deno.Command("python3", { args: ["-c", "print(1)"] }).output()
  .then((out) => out.success, () => false);
const machineOk = Object.hasOwn(RENAMEAT2, Deno.build.arch);
const why = !bwrap.ok
  ? "bubblewrap cannot run"
  : !python
  ? "python3 is missing"
  : !machineOk
  ? `renameat2 number unknown on ${Deno.build.arch}`
  : null;
if (why !== null) console.warn(`\n!!!!! SKIPPING the worker race suite: ${why} !!!!!\n`);

/** Operations in total across the six tools. */
const OPERATIONS = 20_000;
/** Calls in flight at once. */
const PARALLEL = 16;

/** Hash of every entry below `dir`: what must not change. */
async function fingerprint(dir: string): Promise<string[]> {
  const lines: string[] = [];
  const visit = async (path: string): Promise<void> => {
    const info = await Deno.lstat(path);
    const rel = relative(dir, path) || ".";
    if (info.isSymlink) lines.push(`${rel} -> ${await Deno.readLink(path)}`);
    else if (info.isFile) {
      const hash = createHash("sha256").update(await Deno.readFile(path)).digest("hex");
      lines.push(`${rel} ${hash} ${info.mode} ${info.nlink}`);
    } else {
      lines.push(`${rel}/`);
      const names: string[] = [];
      for await (const entry of Deno.readDir(path)) names.push(entry.name);
      for (const name of names.sort()) await visit(join(path, name));
    }
  };
  await visit(dir);
  return lines;
}

/** Every path below `dir` whose name looks like a temporary file (`.x.tern-1234abcd.tmp`). */
async function temporaries(dir: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (path: string): Promise<void> => {
    for await (const entry of Deno.readDir(path)) {
      const full = join(path, entry.name);
      if (/\.tern-[0-9a-f]+\.tmp$/.test(entry.name) || entry.name.endsWith(".tmp")) {
        found.push(full);
      }
      if (entry.isDirectory) await visit(full);
    }
  };
  await visit(dir);
  return found;
}

/** The i-th operation: each of the six tools in turn, aimed at the swapped folder. */
function operation(i: number): [string, Record<string, unknown>] {
  switch (i % 6) {
    case 0:
      return ["read", { path: i % 12 === 0 ? "race/nested.txt" : "race/target.txt" }];
    case 1:
      return ["write", {
        path: i % 4 === 1 ? "race/target.txt" : `race/new-${i % 50}.txt`,
        content: `inside ${i}\n`,
      }];
    case 2:
      return ["edit", {
        path: "race/target.txt",
        old_string: "OUTSIDE-UNCHANGED",
        new_string: "PWNED",
      }];
    case 3:
      return ["list", { path: "race" }];
    case 4:
      return ["glob", { pattern: "*", path: "race" }];
    default:
      return ["grep", { pattern: "SECRET|TARGET|inside", path: "race" }];
  }
}

/** One race: what the flipper swaps, what the tools do meanwhile, and what must not leak. */
interface RaceCase {
  /** The two names (relative to the workspace) the flipper exchanges. */
  swap: [string, string];
  /** Makes the workspace's side of the race; `dir` is the outside folder, already filled. */
  plant(ws: string, dir: string): Promise<void>;
  operation(i: number): [string, Record<string, unknown>];
  count: number;
  /** Texts no result may contain. */
  never: string[];
  /** Grants added (as request_permissions would) before the race. */
  grants?: (dir: string) => Partial<Grants>;
}

/** Runs `race.count` calls, {@linkcode PARALLEL} at a time; counts the outcomes. */
async function hammer(runtime: SandboxRuntime, race: RaceCase): Promise<Map<string, number>> {
  const outcomes = new Map<string, number>();
  const signal = new AbortController().signal;
  const roots = { read: fileRoots(runtime.profile.grants.read), write: [] };
  let next = 0;
  const lane = async () => {
    while (next < race.count) {
      const [tool, args] = race.operation(next++);
      const result: Observation = await runtime.worker!.call(tool, args, { signal, roots });
      const text = JSON.stringify(result);
      for (const secret of race.never) {
        ok(!text.includes(secret), `${tool} reached outside: ${text}`);
      }
      const key = `${tool} ${result.status === "SUCCEEDED" ? "ok" : result.code}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, lane));
  return outcomes;
}

function fileRoots(list: Grants["read"]): string[] {
  return list === "all" ? [] : [...list];
}

/**
 * Runs `race` in a box: the outside folder holds the secret, the target and a name only it
 * has; afterwards the outside folder must be byte-identical and no temporary file left in the
 * box or the run's private tmp folder.
 */
async function runRace(race: RaceCase): Promise<void> {
  await withBox(async (box) => {
    const dir = join(box.outside, "dir");
    await Deno.mkdir(dir);
    await Deno.writeTextFile(join(dir, "nested.txt"), `${SECRET}\n`);
    await Deno.writeTextFile(join(dir, "target.txt"), TARGET);
    await Deno.writeTextFile(join(dir, OUTSIDE_NAME), `${SECRET}\n`);
    await race.plant(box.ws, dir);
    const outsideBefore = await fingerprint(box.outside);
    const runtime = await createSandbox({
      workspace: box.ws,
      profile: ":workspace",
      noSandbox: false,
      home: box.home,
      ternHome: join(box.root, "tern-home"),
      env: { PATH: "/usr/bin:/bin", HOME: box.home },
      handlerUrl: new URL("../../src/tools/worker_handler.ts", import.meta.url),
      runId: "race",
    });
    if (race.grants) await runtime.setExtraGrants(race.grants(dir));
    const tmp = runtime.explain().tmp;
    const flipper = new Deno.Command("python3", {
      args: ["-c", FLIPPER, ...race.swap],
      cwd: box.ws,
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const lines = flipper.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let outcomes: Map<string, number>;
    let leftInTmp: string[];
    try {
      equal((await lines.read()).value?.trim(), "ready");
      outcomes = await hammer(runtime, race);
      leftInTmp = [...Deno.readDirSync(tmp)].map((entry) => entry.name);
    } finally {
      await flipper.stdin.close().catch(() => {});
      await flipper.status;
      lines.releaseLock();
      await runtime.close();
    }
    console.log([...outcomes.entries()].sort().map(([k, n]) => `${k}: ${n}`).join(", "));
    deepEqual(await fingerprint(box.outside), outsideBefore, "something outside changed");
    deepEqual(await temporaries(box.root), [], "temporary files were left");
    deepEqual(leftInTmp, [], "the private tmp folder is not empty");
    // The race really happened: some calls met the symlink.
    ok([...outcomes.keys()].some((key) => !key.endsWith(" ok")), "no call ever met the swap");
  });
}

Deno.test({
  name:
    "the tool worker never reads or writes outside while a process swaps a folder with renameat2",
  ignore: why !== null,
  async fn() {
    await runRace({
      swap: ["race", "race.link"],
      async plant(ws, dir) {
        await Deno.mkdir(join(ws, "race"));
        await Deno.writeTextFile(join(ws, "race/nested.txt"), "inside\n");
        await Deno.symlink(dir, join(ws, "race.link"));
      },
      operation,
      count: OPERATIONS,
      never: [SECRET, OUTSIDE_NAME, TARGET.trim()],
    });
  },
});

Deno.test({
  name:
    "the tool worker never writes into a folder granted read-only while a process swaps a folder for a symlink to it",
  ignore: why !== null,
  async fn() {
    await runRace({
      swap: ["ro", "ro.link"],
      async plant(ws, dir) {
        await Deno.mkdir(join(ws, "ro"));
        await Deno.symlink(dir, join(ws, "ro.link"));
      },
      operation: (i) =>
        i % 3 === 0
          ? ["write", { path: `ro/new-${i % 50}.txt`, content: `inside ${i}\n` }]
          : i % 3 === 1
          ? ["edit", {
            path: "ro/target.txt",
            old_string: "OUTSIDE-UNCHANGED",
            new_string: "PWNED",
          }]
          : ["write", { path: "ro/target.txt", content: `inside ${i}\n` }],
      count: 3_000,
      never: [],
      grants: (dir) => ({ read: [dir] }),
    });
  },
});
