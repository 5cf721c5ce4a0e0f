/**
 * bin/tern's own shell, whatever the environment and the command line hold: it runs no file
 * BASH_ENV names (a relative one is the workspace's), takes no functions or shell options from
 * the environment, and reads `-C` run together with other switches (`-cC DIR`) as tern does, so
 * that DIR's PATH folders give it no program.
 */
import { equal, ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import { runLauncher } from "../support/launcher.ts";
import { declaredFlags, ROOT, tempWorkspace } from "../support/tern_process.ts";

const read = (path: string) => Deno.readTextFile(path).catch(() => null);

Deno.test("bin/tern reads -C run together with switches (-hC DIR) as tern does: DIR's PATH folders give it no program", async () => {
  const ws = await tempWorkspace();
  const other = await tempWorkspace();
  const outside = await Deno.makeTempDir({ prefix: "tern-launcher-" });
  const marker = join(outside, "planted");
  try {
    const venv = join(ws.dir, ".venv", "bin");
    await Deno.mkdir(venv, { recursive: true });
    for (const name of ["bash", "readlink", "wc", "uname", "deno"]) {
      await Deno.writeTextFile(
        join(venv, name),
        `#!/bin/sh\necho ${name} >> '${marker}' 2>/dev/null\nexec /usr/bin/${name} "$@"\n`,
      );
      await Deno.chmod(join(venv, name), 0o755);
    }
    await Deno.mkdir(join(ws.dir, ".tern"));
    await Deno.writeTextFile(join(ws.dir, ".tern", "config.jsonc"), "{}\n");
    const env = {
      PATH: `${venv}:${dirname(Deno.execPath())}:/usr/bin:/bin`,
      HOME: ws.home,
      TERN_HOME: ws.home,
    };
    for (const args of [["-hC", ws.dir], ["-cVC", ws.dir, "--help"]]) {
      const run = await runLauncher(args, { cwd: outside, env });
      equal(await read(marker), null, `${args.join(" ")}: a look-alike ran: ${run.stderr}`);
    }
    // The hosts too come from the workspace tern works in.
    await Deno.writeTextFile(
      join(other.dir, ".mcp.json"),
      '{"mcpServers":{"z":{"url":"https://elsewhere.test/m"}}}',
    );
    const net = declaredFlags({ HOME: ws.home, TERN_HOME: ws.home }, {
      cwd: ws.dir,
      args: ["-cC", other.dir],
    }).find((flag) => flag.startsWith("--allow-net=")) ?? "";
    ok(net.split(",").includes("elsewhere.test"), net);
  } finally {
    await ws.cleanup();
    await other.cleanup();
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("bin/tern runs no BASH_ENV file and takes no shell functions or options from the environment", async () => {
  const ws = await tempWorkspace();
  const marker = join(ws.home, "planted");
  try {
    await Deno.writeTextFile(join(ws.dir, ".bashenv"), `echo bash_env >> '${marker}'\n`);
    // A project config makes the launcher size it (`wc`).
    await Deno.mkdir(join(ws.dir, ".tern"));
    await Deno.writeTextFile(join(ws.dir, ".tern", "config.jsonc"), "{}\n");
    const env = {
      PATH: `${dirname(Deno.execPath())}:/usr/bin:/bin`,
      HOME: ws.home,
      TERN_HOME: ws.home,
    };
    const cases: [string[], Record<string, string>][] = [
      [["--version"], { BASH_ENV: ".bashenv" }],
      [["--help"], { BASH_ENV: join(ws.dir, ".bashenv") }],
      [["--help"], { "BASH_FUNC_wc%%": `() { echo wc >> '${marker}'; command wc "$@"; }` }],
      // A glob with no match (tern's home has no mcp folder) stopped the launcher.
      [["--help"], { BASHOPTS: "failglob" }],
    ];
    for (const [args, extra] of cases) {
      const run = await runLauncher(args, { cwd: ws.dir, env: { ...env, ...extra } });
      const what = `${args[0]} with ${Object.keys(extra)[0]}`;
      equal(run.code, 0, `${what}: ${run.stderr}`);
      ok(run.stdout.startsWith("tern ") || run.stdout.startsWith("Usage: tern"), what);
      equal(await read(marker), null, `${what}: the environment's shell code ran`);
    }
  } finally {
    await ws.cleanup();
  }
});

Deno.test("./run.sh started in a repository starts no program of it, even with . on PATH", async () => {
  const ws = await tempWorkspace();
  const marker = join(ws.home, "planted");
  try {
    for (const name of ["bash", "dirname", "readlink", "deno", "sh"]) {
      await Deno.writeTextFile(
        join(ws.dir, name),
        `#!/bin/sh\necho ${name} >> '${marker}'\nexit 1\n`,
      );
      await Deno.chmod(join(ws.dir, name), 0o755);
    }
    const env = { PATH: `.:${dirname(Deno.execPath())}:/usr/bin:/bin`, HOME: ws.home };
    for (const args of [["--version"], ["--help"]]) {
      const run = await runLauncher(args, { cwd: ws.dir, env, launcher: join(ROOT, "run.sh") });
      equal(run.code, 0, `${args[0]}: ${run.stderr}`);
      equal(await read(marker), null, `${args[0]}: the repository's program ran`);
    }
  } finally {
    await ws.cleanup();
  }
});

Deno.test("bin/tern's Deno takes no NODE_OPTIONS file and writes no coverage into the workspace", async () => {
  const ws = await tempWorkspace();
  const marker = join(ws.home, "planted");
  try {
    // Deno runs a --require file before any module: here it leaves a mark tern's process may write.
    await Deno.writeTextFile(
      join(ws.dir, "hook.cjs"),
      `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran");\n`,
    );
    const env = {
      PATH: `${dirname(Deno.execPath())}:/usr/bin:/bin`,
      HOME: ws.home,
      TERN_HOME: ws.home,
    };
    const extras: Record<string, string>[] = [
      { NODE_OPTIONS: "--require ./hook.cjs" },
      { NODE_OPTIONS: `--require ${join(ws.dir, "hook.cjs")}` },
      { DENO_COVERAGE_DIR: "coverage" },
    ];
    for (const extra of extras) {
      const run = await runLauncher(["--help"], { cwd: ws.dir, env: { ...env, ...extra } });
      const what = JSON.stringify(extra);
      equal(run.code, 0, `${what}: ${run.stderr}`);
      equal(await read(marker), null, `${what}: the workspace's file ran in tern's process`);
      const written = await Deno.lstat(join(ws.dir, "coverage")).then(() => true, () => false);
      equal(written, false, `${what}: tern's process wrote the workspace`);
    }
  } finally {
    await ws.cleanup();
  }
});

/**
 * A stand-in checkout at `root`: tern's bin/tern and bin/_env.sh, with a main.ts that imports
 * an npm package (`arg`) and says what it got.
 */
async function standInCheckout(root: string): Promise<void> {
  await Deno.mkdir(join(root, "bin"), { recursive: true });
  for (const file of ["bin/tern", "bin/_env.sh"]) {
    await Deno.copyFile(join(ROOT, file), join(root, file));
  }
  await Deno.writeTextFile(
    join(root, "deno.json"),
    '{ "nodeModulesDir": "auto", "imports": { "arg": "npm:arg@5.0.2" } }\n',
  );
  await Deno.writeTextFile(
    join(root, "main.ts"),
    'import arg from "arg";\nconsole.log("tern", typeof arg);\n',
  );
}

/** A package named `arg` in `folder` whose code, if it ever runs, writes `marker`. */
async function plantedArg(folder: string, marker: string): Promise<void> {
  await Deno.mkdir(folder);
  await Deno.writeTextFile(
    join(folder, "package.json"),
    '{ "name": "arg", "version": "5.0.2", "main": "index.js" }\n',
  );
  await Deno.writeTextFile(
    join(folder, "index.js"),
    `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran");\n` +
      "module.exports = () => ({});\n",
  );
}

/** The launcher's environment for a stand-in checkout, its home and temp folder in `folder`. */
function standInEnv(folder: string): Record<string, string> {
  return {
    PATH: "/usr/bin:/bin",
    HOME: join(folder, "home"),
    TERN_DENO_BIN: Deno.execPath(),
    DENO_DIR: Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME") ?? "/", ".cache/deno"),
    TMPDIR: folder,
  };
}

Deno.test("bin/tern does not start as a member of a Deno workspace above its checkout", async () => {
  // A folder that holds a checkout of its own (bin/tern, bin/_env.sh, a main.ts that imports an
  // npm package), as a workspace that holds tern's checkout does: a command could write there.
  const above = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-above-" }));
  const root = join(above, "tern");
  const marker = join(above, "planted");
  try {
    await standInCheckout(root);
    // The package a link would put in place of `arg`.
    await plantedArg(join(above, "arg"), marker);
    const env = standInEnv(above);
    const tern = () =>
      runLauncher(["--help"], { cwd: above, env, launcher: join(root, "bin/tern") });
    // A deno.json above that is no workspace changes nothing, nor does an npm workspace.
    await Deno.writeTextFile(join(above, "deno.json"), '{ "tasks": {} }\n');
    await Deno.writeTextFile(join(above, "package.json"), '{ "workspaces": ["packages/*"] }\n');
    const plain = await tern();
    equal(plain.code, 0, plain.stderr);
    equal(plain.stdout, "tern function\n");
    for (const name of ["deno.json", "deno.jsonc"]) {
      await Deno.remove(join(above, "deno.json")).catch(() => {});
      await Deno.writeTextFile(
        join(above, name),
        '{ "workspace": ["./tern"], "links": ["./arg"], "nodeModulesDir": "auto" }\n',
      );
      const run = await tern();
      equal(run.code, 2, `${name}: ${run.stderr}`);
      equal(
        run.stderr,
        `tern: "${join(above, name)}" makes a Deno workspace of a folder that holds tern's ` +
          `checkout "${root}", and Deno would load tern's code as part of it: move tern out of ` +
          `"${above}", or remove the workspace from that file\n`,
      );
      equal(await read(marker), null, `${name}: the linked package ran as tern`);
      await Deno.remove(join(above, name));
    }
  } finally {
    await Deno.remove(above, { recursive: true });
  }
});

Deno.test("bin/tern's Deno reads no package.json a command could plant at the checkout's root", async () => {
  // A checkout of its own (as in the test above) whose root gets a package.json naming an npm
  // workspace with a package in place of one tern imports: a command may create it when the
  // workspace holds tern's checkout (the own-code paths that exist are read-only; a missing one
  // is not there to bind).
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-pkg-" }));
  const marker = join(root, "planted");
  try {
    await standInCheckout(root);
    await Deno.writeTextFile(join(root, "package.json"), '{ "workspaces": ["evil"] }\n');
    await plantedArg(join(root, "evil"), marker);
    const env = standInEnv(root);
    const run = await runLauncher(["--help"], {
      cwd: root,
      env,
      launcher: join(root, "bin/tern"),
    });
    equal(await read(marker), null, `the planted package ran as tern: ${run.stderr}`);
    equal(run.code, 0, run.stderr);
    equal(run.stdout, "tern function\n");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
