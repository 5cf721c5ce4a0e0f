/**
 * The programs tern starts on the host are never found in a folder sandboxed commands may
 * write: not through a PATH entry there (as written, or by its real path, or not made yet), and
 * not through a link elsewhere that leads there. Real folders and links.
 */
import { equal, throws } from "node:assert/strict";
import { join } from "node:path";
import {
  guardHostPrograms,
  hostProgram,
  hostProgramOr,
  hostSearchPath,
  personPath,
} from "../../src/core/host_programs.ts";

Deno.test("host programs skip every PATH entry and program in a guarded folder", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-hostprog-" }));
  try {
    const ws = join(root, "ws");
    const outside = join(root, "bin");
    const linked = join(root, "linked-bin");
    await Deno.mkdir(join(ws, ".venv", "bin"), { recursive: true });
    await Deno.mkdir(outside);
    // An entry outside that is a link to a workspace folder; one below a link to the workspace
    // that no command has made yet.
    await Deno.symlink(join(ws, ".venv", "bin"), linked);
    await Deno.symlink(ws, join(root, "ws-link"));
    const program = (dir: string, name: string) =>
      Deno.writeTextFile(join(dir, name), "#!/bin/sh\n", { mode: 0o755 });
    await program(join(ws, ".venv", "bin"), "tern-probe-tool");
    await program(outside, "tern-probe-tool");
    await program(join(ws, ".venv", "bin"), "tern-only-here");
    // A program outside that is a link to one in the workspace.
    await Deno.symlink(join(ws, ".venv", "bin", "tern-only-here"), join(outside, "tern-linked"));
    const before = personPath();
    const path = [
      join(ws, ".venv", "bin"),
      linked,
      join(ws, "not-made-yet"),
      join(root, "ws-link", "later", "bin"),
      "relative/bin",
      outside,
    ].join(":");
    guardHostPrograms([ws]);
    equal(hostSearchPath(path), outside);
    equal(hostProgram("tern-probe-tool", path), join(outside, "tern-probe-tool"));
    throws(() => hostProgram("tern-only-here", path), Deno.errors.NotFound);
    throws(() => hostProgram("tern-linked", path), Deno.errors.NotFound);
    // Named by path: one in the workspace is refused as well.
    throws(() => hostProgram(join(ws, ".venv", "bin", "tern-probe-tool")), Deno.errors.NotFound);
    equal(hostProgram(join(outside, "tern-probe-tool")), join(outside, "tern-probe-tool"));
    // Where nothing is found, the usual install place: a spawn of it fails, none looks it up.
    equal(hostProgramOr("tern-only-here-2"), "/usr/bin/tern-only-here-2");
    // The person's PATH, as tern started, stays for commands in the sandbox.
    equal(personPath(), before);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
