/**
 * The write grant a single-file build works out for its run (what its subagents start with):
 * an empty TERN_HOME or TMPDIR is unset, and a folder with a comma is left out, never granted as
 * the parts Deno's list would cut it into.
 */
import { deepEqual } from "node:assert/strict";
import { withRunWrites } from "../../src/cli/single_file_main.ts";

const FLAGS = ["--allow-read", "--allow-write=/builder/.tern,/tmp", "--allow-run"];

function writes(env: Record<string, string>, cwd = "/work/ws"): string[] {
  const flags = withRunWrites(FLAGS, (name) => env[name], cwd);
  deepEqual([flags[0], flags[2]], [FLAGS[0], FLAGS[2]]);
  return flags[1].slice("--allow-write=".length).split(",");
}

Deno.test("withRunWrites() grants this run's tern home, temp folder and memory folder", () => {
  deepEqual(writes({ HOME: "/home/u", TMPDIR: "/var/tmp" }), [
    "/home/u/.tern",
    "/var/tmp",
    "/work/ws/.tern/memory",
  ]);
  deepEqual(writes({ HOME: "/home/u", TERN_HOME: "/srv/tern" }), [
    "/srv/tern",
    "/tmp",
    "/work/ws/.tern/memory",
  ]);
});

Deno.test("withRunWrites() reads an empty TERN_HOME or TMPDIR as unset, never as the workspace", () => {
  deepEqual(writes({ HOME: "/home/u", TERN_HOME: "", TMPDIR: "" }), [
    "/home/u/.tern",
    "/tmp",
    "/work/ws/.tern/memory",
  ]);
});

Deno.test("withRunWrites() leaves out a folder with a comma", () => {
  deepEqual(writes({ HOME: "/home/u", TMPDIR: "/tmp/a,/etc" }), [
    "/home/u/.tern",
    "/work/ws/.tern/memory",
  ]);
  deepEqual(writes({ HOME: "/home/u" }, "/work/x,y"), ["/home/u/.tern", "/tmp"]);
});
