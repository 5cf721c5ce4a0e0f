/**
 * A process of the session that exchanges two names in a folder (a folder and a symlink beside
 * it) with `renameat2(RENAME_EXCHANGE)` as fast as it can: what a background command of a hostile
 * model can run to race a check of a path against its use.
 */
import { equal } from "node:assert/strict";
import { join } from "node:path";
import type { Need } from "./needs.ts";

/** Exchanges the two names it is given (in its cwd) until its stdin has something or ends. */
const FLIPPER = `
import ctypes, os, select, sys
libc = ctypes.CDLL(None, use_errno=True)
nr = {"x86_64": 316, "aarch64": 276}[os.uname().machine]
a, b = (name.encode() for name in sys.argv[1:3])
print("ready", flush=True)
while not select.select([sys.stdin], [], [], 0)[0]:
    for _ in range(200):
        libc.syscall(nr, -100, a, -100, b, 2)
`;

/** python3 with ctypes, on a machine whose `renameat2` number the flipper knows. */
export const flipperNeed: Need = {
  ok: ["x86_64", "aarch64"].includes(Deno.build.arch) &&
    await new Deno.Command("python3", { args: ["-c", "import ctypes"] }).output()
      .then((out) => out.success, () => false),
  missing: "python3 (with ctypes) is missing or the machine is not x86_64/aarch64",
};

/** Runs `race` while `a` and `b` (names in `cwd`) are exchanged; both are back in place after. */
export async function whileFlipping(
  cwd: string,
  a: string,
  b: string,
  race: () => Promise<void>,
): Promise<void> {
  const flipper = new Deno.Command("python3", {
    args: ["-c", FLIPPER, a, b],
    cwd,
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const reader = flipper.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    equal((await reader.read()).value?.trim(), "ready");
    await race();
  } finally {
    await flipper.stdin.close();
    await reader.cancel();
    await flipper.status;
    // An odd number of swaps leaves the link where the folder was. (A race may have removed
    // the folder, emptied: then there is nothing to swap back.)
    const there = (() => {
      try {
        return Deno.lstatSync(join(cwd, a));
      } catch {
        return undefined;
      }
    })();
    if (there?.isSymlink) {
      await new Deno.Command("python3", {
        args: ["-c", FLIPPER.replace("while not", "if not"), a, b],
        cwd,
        stdin: "null",
        stdout: "null",
      }).output();
    }
  }
}
