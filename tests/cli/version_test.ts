/** `tern --version`: tern's version, Deno's and the build kind, from main.ts and from bin/tern. */
import { equal } from "node:assert/strict";
import { join } from "node:path";
import { buildKind, VERSION, versionLine } from "../../src/version.ts";
import { ROOT } from "../support/tern_process.ts";

Deno.test("buildKind() tells the sources, bin/build's bundle and a deno compile binary apart", () => {
  equal(buildKind("file:///home/me/tern/src/version.ts"), "source");
  equal(buildKind("file:///home/me/tern/.tools/bundle/main.js"), "bundle");
  equal(buildKind("file:///tmp/deno-compile-tern/home/me/tern/src/version.ts"), "compiled");
  equal(versionLine(), `tern ${VERSION} (deno ${Deno.version.deno}, source)`);
});

Deno.test("bin/tern --version says bundle while the bundle is fresh, source once a file is newer", async () => {
  // A checkout of its own: bin/tern, bin/_env.sh, src/version.ts and a bundle with its stamp.
  const root = await Deno.makeTempDir({ prefix: "tern-root-" });
  try {
    await Deno.mkdir(join(root, "bin"));
    await Deno.mkdir(join(root, "src"));
    await Deno.mkdir(join(root, ".tools/bundle"), { recursive: true });
    await Deno.mkdir(join(root, "deno"));
    for (const file of ["bin/tern", "bin/_env.sh", "src/version.ts"]) {
      await Deno.copyFile(join(ROOT, file), join(root, file));
    }
    await Deno.writeTextFile(join(root, "main.ts"), "");
    await Deno.writeTextFile(join(root, "deno/package.json"), '{\n  "version": "2.9.6"\n}\n');
    await Deno.writeTextFile(join(root, "deno/deno"), "#!/bin/sh\nexit 9\n");
    await Deno.chmod(join(root, "deno/deno"), 0o755);
    await Deno.writeTextFile(join(root, ".tools/bundle/main.js"), "");
    await Deno.writeTextFile(join(root, ".tools/bundle/stamp"), "");
    const past = new Date(Date.now() - 60_000);
    for (const file of ["main.ts", "src", "src/version.ts"]) {
      await Deno.utime(join(root, file), past, past);
    }
    const version = async () => {
      const out = await new Deno.Command(join(root, "bin/tern"), {
        args: ["--version"],
        env: { PATH: "/usr/bin:/bin", TERN_DENO_BIN: join(root, "deno/deno") },
        clearEnv: true,
        stdout: "piped",
      }).output();
      equal(out.code, 0);
      return new TextDecoder().decode(out.stdout);
    };
    equal(await version(), `tern ${VERSION} (deno 2.9.6, bundle)\n`);
    const future = new Date(Date.now() + 60_000);
    await Deno.utime(join(root, "src/version.ts"), future, future);
    equal(await version(), `tern ${VERSION} (deno 2.9.6, source)\n`);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("main.ts --version into a full stdout fails with one line on stderr, no stack trace", async () => {
  const out = await new Deno.Command("bash", {
    args: ["-c", `"${Deno.execPath()}" run --no-prompt --no-check main.ts --version >/dev/full`],
    cwd: ROOT,
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  equal(out.code, 1, stderr);
  equal(stderr.trim().split("\n").length, 1, stderr);
  equal(stderr.startsWith("tern: cannot write the version to stdout:"), true, stderr);
});
