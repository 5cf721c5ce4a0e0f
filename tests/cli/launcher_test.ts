/**
 * bin/tern and bin/_env.sh: `--version` without Deno, and the hosts tern's own process may
 * connect to (`--allow-net`), found in the environment, the command line and the config files.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { PROVIDER_PRESETS } from "../../src/llm/presets.ts";
import { loadConfig } from "../../src/config/load.ts";
import { VERSION } from "../../src/version.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { declaredFlags, ROOT, runTern, tempWorkspace } from "../support/tern_process.ts";
import { runLauncher } from "../support/launcher.ts";

const decoder = new TextDecoder();

/** The hosts in `--allow-net=` of the declared flags, without repeats, in order. */
function netHosts(
  env: Record<string, string>,
  where: { cwd?: string; args?: string[] } = {},
): string[] {
  const flag = declaredFlags(env, where).find((arg) => arg.startsWith("--allow-net")) ?? "";
  ok(flag.startsWith("--allow-net="), `expected --allow-net=<hosts>, got ${flag}`);
  return [...new Set(flag.slice("--allow-net=".length).split(","))];
}

/** A Deno that fails if started, with the npm package's package.json saying `version`. */
async function fakeDeno(version: string): Promise<{ bin: string; cleanup(): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "tern-fake-deno-" });
  await Deno.writeTextFile(
    join(dir, "package.json"),
    `{\n  "name": "@deno/linux-x64-glibc",\n  "version": "${version}",\n  "os": ["linux"]\n}\n`,
  );
  await Deno.writeTextFile(join(dir, "deno"), "#!/bin/sh\necho 'deno started' >&2\nexit 9\n");
  await Deno.chmod(join(dir, "deno"), 0o755);
  return { bin: join(dir, "deno"), cleanup: () => Deno.remove(dir, { recursive: true }) };
}

/** bin/tern's output for `args` with TERN_DENO_BIN=`denoBin` and no deno on PATH. */
function launcher(args: string[], denoBin: string, extra: Record<string, string> = {}) {
  return runLauncher(args, { env: { PATH: "/usr/bin:/bin", TERN_DENO_BIN: denoBin, ...extra } });
}

Deno.test("bin/tern --version answers without starting Deno: tern's, Deno's version, build kind", async () => {
  const deno = await fakeDeno("9.8.7");
  try {
    for (const flag of ["--version", "-V"]) {
      // The Deno it would start fails (exit 9): only the launcher can answer.
      const out = await launcher([flag], deno.bin, { TERN_NO_BUNDLE: "1" });
      equal(out.code, 0, out.stderr);
      equal(out.stdout, `tern ${VERSION} (deno 9.8.7, source)\n`);
    }
    // Anything more than the flag is main.ts's to answer: that Deno does start.
    equal((await launcher(["--version", "--json"], deno.bin)).code, 9);
  } finally {
    await deno.cleanup();
  }
});

Deno.test("bin/tern --version prints main.ts's line; a Deno without package.json answers itself", async () => {
  const deno = await fakeDeno(Deno.version.deno);
  const ws = await tempWorkspace();
  try {
    const fromMain = await runTern(["--version"], { cwd: ws.dir });
    equal(fromMain.code, 0, fromMain.stderr);
    equal(fromMain.stdout, `tern ${VERSION} (deno ${Deno.version.deno}, source)\n`);
    const fast = await launcher(["--version"], deno.bin, { TERN_NO_BUNDLE: "1" });
    equal(fast.stdout, fromMain.stdout);
    // This Deno (a link to the real one) has no package.json beside it: bin/tern cannot know
    // its version, main.ts does.
    const linked = join(ws.dir, "deno");
    await Deno.symlink(Deno.execPath(), linked);
    const slow = await launcher(["--version"], linked, {
      TERN_NO_BUNDLE: "1",
      HOME: ws.home,
    });
    equal(slow.code, 0, slow.stderr);
    equal(slow.stdout, fromMain.stdout);
  } finally {
    await ws.cleanup();
    await deno.cleanup();
  }
});

Deno.test("bin/tern starts tern (set -e) with no settings at all and with every kind of file", async () => {
  const ws = await tempWorkspace();
  try {
    const env = {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: ws.home,
      TERN_HOME: ws.home,
    };
    const help = async () => {
      const out = await runLauncher(["--help"], { cwd: ws.dir, env });
      equal(out.code, 0, out.stderr);
      match(out.stdout, /^Usage: tern/m);
    };
    await help();
    await Deno.mkdir(join(ws.dir, ".tern"));
    await Deno.writeTextFile(join(ws.dir, ".tern/config.jsonc"), '{"model": "m"}');
    await Deno.writeTextFile(join(ws.dir, ".env"), "FOO=bar\n");
    await Deno.writeTextFile(join(ws.dir, ".mcp.json"), '{"mcpServers": {"a": {"command": "x"}}}');
    await Deno.writeTextFile(join(ws.home, "config.jsonc"), '{"maxRounds": 3}');
    await help();
  } finally {
    await ws.cleanup();
  }
});

Deno.test("bin/_env.sh picks the npm build of Deno for each machine Deno publishes one for", () => {
  const pick = (os: string, machine: string) => {
    const out = new Deno.Command("bash", {
      args: [
        "-c",
        `source "${ROOT}/bin/_env.sh"; deno_platform_package "$1" "$2"`,
        "_",
        os,
        machine,
      ],
      stdout: "piped",
    }).outputSync();
    return decoder.decode(out.stdout).trim();
  };
  equal(pick("Linux", "x86_64"), "linux-x64-glibc");
  equal(pick("Linux", "aarch64"), "linux-arm64-glibc");
  equal(pick("Darwin", "arm64"), "darwin-arm64");
  equal(pick("Darwin", "x86_64"), "darwin-x64");
  equal(pick("FreeBSD", "amd64"), "");
});

Deno.test("./run.sh with a flag runs tern: --version is tern's, not Deno's", async () => {
  const out = await new Deno.Command(join(ROOT, "run.sh"), {
    args: ["--version"],
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: Deno.env.get("HOME") ?? "/" },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  equal(out.code, 0, decoder.decode(out.stderr));
  match(
    decoder.decode(out.stdout),
    new RegExp(`^tern ${VERSION} \\(deno [0-9.]+, (source|bundle)\\)\n$`),
  );
});

Deno.test("./run.sh with a flag runs tern on the folder it was started in, not the checkout", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tern-run-sh-" });
  try {
    await Deno.mkdir(join(dir, "project", ".tern"), { recursive: true });
    await Deno.mkdir(join(dir, "home"));
    await Deno.writeTextFile(
      join(dir, "project", ".tern", "config.jsonc"),
      '{ "model": "model-of-this-project" }\n',
    );
    const out = await new Deno.Command(join(ROOT, "run.sh"), {
      args: ["-C", ".", "config"],
      cwd: join(dir, "project"),
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: join(dir, "home") },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    equal(out.code, 0, decoder.decode(out.stderr));
    match(decoder.decode(out.stdout), /^model +model-of-this-project +\(project config/m);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the launcher grants exactly the provider presets' hosts by default", () => {
  const presetHosts = Object.values(PROVIDER_PRESETS).map((preset) => {
    const url = new URL(preset.baseUrl);
    return url.port ? `${url.hostname}:${url.port}` : url.hostname;
  });
  deepEqual(
    netHosts({ HOME: "/nonexistent" }, { cwd: "/" }).sort(),
    [...new Set(presetHosts)].sort(),
  );
});

Deno.test("the launcher grants the hosts of the URL settings in the environment, the command line and config files", async () => {
  const ws = await tempWorkspace();
  const other = await tempWorkspace();
  try {
    const write = async (path: string, text: string) => {
      await Deno.mkdir(join(path, ".."), { recursive: true });
      await Deno.writeTextFile(path, text);
    };
    await write(
      join(ws.home, "config.jsonc"),
      '{ "providers": { "p": { "baseUrl": "https://user.test/v1" } },' +
        ' "indexEmbeddings": { "baseUrl": "https://embed-user.test/v1", "model": "e" } }',
    );
    await write(
      join(ws.home, "mcp", "extra.json"),
      '{ "servers": { "a": { "url": "https://mcp-user.test:8443/mcp" } } }',
    );
    await write(
      join(ws.dir, ".tern", "config.jsonc"),
      '// "https://comment.test" does not count\n{ "baseUrl": "http://project.test:8000/v1" }',
    );
    await write(join(ws.dir, ".env"), "TERN_BASE_URL=http://dotenv.test/v1\n");
    await write(
      join(ws.dir, ".mcp.json"),
      '{"mcpServers":{"x":{"url":"https://tok:secret@mcp.test/m?q=1"},"y":{"url":"http://[::1]:9/x"},' +
        '"v":{"url":"${TERN_MCP_URL}"}}}',
    );
    await write(
      join(other.dir, ".mcp.json"),
      '{"mcpServers":{"z":{"url":"https://elsewhere.test/m"}}}',
    );
    const env = {
      HOME: "/nonexistent",
      TERN_HOME: ws.home,
      OPENAI_BASE_URL: "https://env.test/v1",
      TERN_MCP_URL: "https://mcp-var.test/x",
      ANTHROPIC_NOTE: "see https://anthropic-env.test",
      UNRELATED_URL: "https://unrelated.test",
      TERN_EXTRA_HOSTS: "extra.test,10.0.0.5:8080",
    };
    const hosts = netHosts(env, {
      cwd: ws.dir,
      args: ["run", "--base-url=https://flag.test/v1", "read https://task.test first"],
    });
    for (
      const host of [
        "user.test",
        "embed-user.test",
        "mcp-user.test:8443",
        "project.test:8000",
        "dotenv.test",
        "mcp.test",
        "[::1]:9",
        "mcp-var.test",
        "env.test",
        "flag.test",
        "extra.test",
        "10.0.0.5:8080",
      ]
    ) {
      ok(hosts.includes(host), `${host} missing from ${hosts.join(",")}`);
    }
    for (const host of ["unrelated.test", "anthropic-env.test", "comment.test", "task.test"]) {
      ok(!hosts.includes(host), `${host}: only URL settings tern uses count: ${hosts}`);
    }
    ok(
      !hosts.some((host) => host.includes("secret") || host.includes("elsewhere")),
      hosts.join(","),
    );
    deepEqual(
      netHosts(env, { cwd: ws.dir, args: ["run", "--base-url", "https://spaced.test/v1", "x"] })
        .filter((host) => host.startsWith("spaced")),
      ["spaced.test"],
    );

    // -C names the workspace whose files count.
    for (const args of [["-C", other.dir], [`-C${other.dir}`], [`--cwd=${other.dir}`]]) {
      const moved = netHosts(env, { cwd: ws.dir, args });
      ok(moved.includes("elsewhere.test") && !moved.includes("mcp.test"), `${args}: ${moved}`);
    }
  } finally {
    await ws.cleanup();
    await other.cleanup();
  }
});

Deno.test("the launcher never grants a host a project file merely mentions", async () => {
  const ws = await tempWorkspace();
  try {
    const write = async (path: string, text: string) => {
      await Deno.mkdir(join(path, ".."), { recursive: true });
      await Deno.writeTextFile(path, text);
    };
    // Comments, unused keys, look-alikes inside other strings, duplicate keys (the last one
    // wins), nested objects and arrays: none of them is a URL setting tern uses.
    await write(
      join(ws.dir, ".tern", "config.jsonc"),
      [
        "// http://evil1.example",
        '/* "baseUrl": "http://evil2.example" */',
        "{",
        '  "unused": "https://evil3.example",',
        '  "model": "m", // "baseUrl": "https://evil4.example"',
        '  "baseUrl": "https://evil5.example",',
        '  "note": "\\"baseUrl\\": \\"https://evil6.example\\"",',
        '  "baseUrl": "https://good-project.test/v1",',
        '  "providers": { "p": { "baseUrl": "https://evil7.example" } },',
        '  "indexEmbeddings": { "baseUrl": "https://evil17.example" }',
        "}",
      ].join("\n"),
    );
    await write(
      join(ws.dir, ".mcp.json"),
      JSON.stringify({
        url: "https://evil8.example",
        mcpServers: {
          s: {
            command: "x",
            args: ["https://evil9.example"],
            extra: { url: "https://evil10.example" },
          },
          t: { url: "https://good-mcp.test/mcp", note: '"url": "https://evil11.example"' },
        },
        other: { servers: { u: { url: "https://evil12.example" } } },
      }),
    );
    await write(
      join(ws.dir, ".env"),
      "# TERN_BASE_URL=https://evil13.example\nDOCS=https://evil14.example\n" +
        "TERN_BASE_URL=https://good-env.test/v1 # https://evil15.example\n",
    );
    // A project file that is a symlink is not read by tern, so it names no host either.
    const outside = await Deno.makeTempDir({ prefix: "tern-outside-" });
    try {
      await Deno.writeTextFile(
        join(outside, "mcp.json"),
        '{"servers":{"o":{"url":"https://evil16.example"}}}',
      );
      await Deno.symlink(join(outside, "mcp.json"), join(ws.dir, ".tern", "mcp.json"));
      const hosts = netHosts({ HOME: "/nonexistent", TERN_HOME: ws.home }, { cwd: ws.dir });
      for (const host of ["good-project.test", "good-mcp.test", "good-env.test"]) {
        ok(hosts.includes(host), `${host} missing from ${hosts}`);
      }
      ok(!hosts.some((host) => host.includes("evil")), hosts.join(","));
    } finally {
      await Deno.remove(outside, { recursive: true });
    }
  } finally {
    await ws.cleanup();
  }
});

Deno.test("the launcher reads a .env's quoted value over lines as tern does: no assignment inside it counts", async () => {
  const ws = await tempWorkspace();
  try {
    for (const quote of ['"', "'", "`"]) {
      // What tern reads as one value (NOTE), the launcher must not read as a base URL.
      await Deno.writeTextFile(
        join(ws.dir, ".env"),
        `TERN_BASE_URL=https://good-env.test/v1\nNOTE=${quote}\n` +
          `TERN_BASE_URL=http://evil-${quote.charCodeAt(0)}.example:8443/v1\n${quote}\n`,
      );
      const env = { HOME: "/nonexistent", TERN_HOME: ws.home };
      const hosts = netHosts(env, { cwd: ws.dir });
      ok(hosts.includes("good-env.test"), hosts.join(","));
      ok(!hosts.some((host) => host.includes("evil")), hosts.join(","));
      // tern's own reader agrees: the URL it uses is the one the launcher granted.
      const { config } = await loadConfig({ cwd: ws.dir, env });
      equal(config.baseUrl, "https://good-env.test/v1");
    }
  } finally {
    await ws.cleanup();
  }
});

Deno.test("the launcher reads hostile project files in time that grows with their size, not its square", async () => {
  // Each file below held bin/tern from starting Deno for minutes to hours when bash's pattern
  // operations on what is left of a part ran once per character: brackets without a quote, a
  // long comment, a string of escaped quotes, a .env line of trailing blanks (30,000 of them
  // took a minute). A repository can hold any of them, and a command can write them.
  const ws = await tempWorkspace();
  try {
    await Deno.mkdir(join(ws.dir, ".tern", "mcp"), { recursive: true });
    await Deno.writeTextFile(join(ws.dir, ".mcp.json"), `{${"[]".repeat(200_000)}}`);
    await Deno.writeTextFile(
      join(ws.dir, ".tern", "config.jsonc"),
      `{"a": 1, // ${"x".repeat(200_000)}\n /* ${"y".repeat(200_000)} */ ` +
        `"baseUrl": "https://after-comments.test/v1"}`,
    );
    await Deno.writeTextFile(
      join(ws.dir, ".tern", "mcp", "quotes.json"),
      `{"s": "${'\\"'.repeat(19_000)}", "servers": {"q": {"url": "https://after-quotes.test"}}}`,
    );
    await Deno.writeTextFile(
      join(ws.dir, ".env"),
      `TERN_BASE_URL=a${" ".repeat(60_000)}\nTERN_BASE_URL=https://last-env.test/v1${
        " ".repeat(9000)
      }\n` +
        // Values of 8,000 characters without a blank: 7 s each when the first word was found
        // by the shortest prefix up to a blank.
        `TERN_BASE_URL=${"a".repeat(8000)}\n`.repeat(40) +
        "TERN_BASE_URL=https://after-long-values.test/v1   # the last one wins\n",
    );
    const script =
      `source "${ROOT}/bin/_env.sh"; tern_deno_flags; printf '%s\\n' "\${TERN_DENO_FLAGS[@]}"`;
    const out = await new Deno.Command("bash", {
      args: ["-c", script],
      cwd: ws.dir,
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: "/nonexistent",
        TERN_HOME: ws.home,
      },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(60_000),
    }).output();
    equal(out.code, 0, decoder.decode(out.stderr));
    const flag = decoder.decode(out.stdout).split("\n").find((a) => a.startsWith("--allow-net="));
    const hosts = flag?.slice("--allow-net=".length).split(",") ?? [];
    // What follows the long comments and the escaped quotes is still read.
    for (const host of ["after-comments.test", "after-quotes.test"]) {
      ok(hosts.includes(host), `${host} missing from ${hosts}`);
    }
    // A line longer than any URL is skipped; a value followed by blanks only still counts.
    ok(!hosts.includes("a"), hosts.join(","));
    ok(!hosts.includes("last-env.test"), "a .env line of over 8,192 characters is skipped");
    ok(hosts.includes("after-long-values.test"), hosts.join(","));
  } finally {
    await ws.cleanup();
  }
});

Deno.test("the launcher lets tern's process write the workspace's .tern/memory, never a path cut at a comma", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { HOME: "/nonexistent", TERN_HOME: ws.home };
    const write = (cwd: string) =>
      declaredFlags(env, { cwd }).find((arg) => arg.startsWith("--allow-write="))!
        .slice("--allow-write=".length).split(",");
    deepEqual(write(ws.dir).at(-1), `${ws.dir}/.tern/memory`);
    // Deno splits the list at commas: "x,y" would grant "<ws>/x" and a relative "y/...".
    const comma = join(ws.dir, "x,y");
    await Deno.mkdir(comma);
    ok(!write(comma).some((path) => path.includes(ws.dir)), write(comma).join(" "));
  } finally {
    await ws.cleanup();
  }
});

Deno.test("the launcher ignores a malformed TERN_EXTRA_HOSTS and says so", () => {
  const out = new Deno.Command("bash", {
    args: ["-c", `source "${ROOT}/bin/_env.sh"; tern_net_hosts; echo "$TERN_NET_HOSTS"`],
    env: { PATH: "/usr/bin:/bin", HOME: "/nonexistent", TERN_EXTRA_HOSTS: "a.test;rm -rf /" },
    clearEnv: true,
    cwd: "/",
  }).outputSync();
  match(decoder.decode(out.stderr), /ignoring TERN_EXTRA_HOSTS="a\.test;rm -rf \/"/);
  ok(!decoder.decode(out.stdout).includes("a.test"));
});

Deno.test("tern run reaching a host the launcher did not grant fails at once, naming it", async () => {
  const server = await startScriptedServer([{ text: "never" }], { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    const env = { HOME: ws.home, TERN_HOME: ws.home };
    // Flags computed without the server's URL, as if it came from somewhere the launcher
    // cannot see; the URL then reaches tern only at run time.
    const flags = declaredFlags(env, { cwd: ws.dir });
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...flags, join(ROOT, "main.ts"), "run", "-m", "scripted", "hi"],
      cwd: ws.dir,
      env: { ...env, PATH: "/usr/bin:/bin", TERN_BASE_URL: server.baseUrl },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = decoder.decode(out.stderr);
    ok(out.code !== 0, stderr);
    const host = new URL(server.baseUrl).host;
    ok(stderr.includes(`"${host}" is not among them`), stderr);
    match(stderr, /TERN_EXTRA_HOSTS/);
    ok(!/retry|attempt/i.test(stderr), `a denied host is not retried: ${stderr}`);
    equal(server.requests.length, 0);

    // Named in the project's config, the same server is reached through the real launcher.
    await Deno.mkdir(join(ws.dir, ".tern"));
    await Deno.writeTextFile(
      join(ws.dir, ".tern", "config.jsonc"),
      JSON.stringify({ baseUrl: server.baseUrl }),
    );
    const run = await runTern(["run", "-m", "scripted", "hi"], { cwd: ws.dir, env });
    equal(run.code, 0, run.stderr);
    equal(server.requests.length, 1);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});

Deno.test("a symlinked bin/tern runs no program from the workspace, even with . on PATH", async () => {
  const ws = await tempWorkspace();
  const deno = await fakeDeno("9.8.7");
  try {
    const marker = join(ws.home, "ran");
    // The repository's readlink would point the launcher at its own bin/_env.sh.
    await Deno.writeTextFile(
      join(ws.dir, "readlink"),
      `#!/bin/sh\necho ran > '${marker}'\necho '${ws.dir}/bin/tern'\n`,
    );
    await Deno.chmod(join(ws.dir, "readlink"), 0o755);
    await Deno.mkdir(join(ws.dir, "bin"));
    await Deno.writeTextFile(join(ws.dir, "bin", "_env.sh"), `echo ran > '${marker}'; exit 42\n`);
    const link = join(ws.home, "lbin");
    await Deno.mkdir(link);
    await Deno.symlink(join(ROOT, "bin", "tern"), join(link, "tern"));
    for (const path of [`.:${link}:/usr/bin:/bin`, `:${link}:/usr/bin:/bin`]) {
      const out = await new Deno.Command(join(link, "tern"), {
        args: ["--version"],
        cwd: ws.dir,
        env: { PATH: path, TERN_DENO_BIN: deno.bin, TERN_NO_BUNDLE: "1", HOSTTYPE: "aarch64" },
        clearEnv: true,
        stdout: "piped",
        stderr: "piped",
      }).output();
      equal(out.code, 0, decoder.decode(out.stderr));
      equal(decoder.decode(out.stdout), `tern ${VERSION} (deno 9.8.7, source)\n`);
      ok(!(await Deno.stat(marker).then(() => true, () => false)), `${path}: the workspace's ran`);
    }
  } finally {
    await deno.cleanup();
    await ws.cleanup();
  }
});

Deno.test("the launcher grants only hosts Deno takes, at most 200 from files", async () => {
  const ws = await tempWorkspace();
  try {
    const servers = Object.fromEntries(
      Array.from({ length: 300 }, (_, i) => [`s${i}`, { url: `https://host${i}.test/mcp` }]),
    );
    servers.bad1 = { url: "http://a..b/mcp" };
    servers.bad2 = { url: "http://x.test:99999999/mcp" };
    await Deno.writeTextFile(join(ws.dir, ".mcp.json"), JSON.stringify({ servers }));
    const env = { HOME: "/nonexistent", TERN_HOME: ws.home };
    const hosts = netHosts(env, { cwd: ws.dir });
    ok(!hosts.includes("a..b") && !hosts.some((host) => host.startsWith("x.test")), `${hosts}`);
    const fromFile = hosts.filter((host) => /^host\d+\.test$/.test(host));
    ok(fromFile.length > 100 && fromFile.length <= 200, `${fromFile.length} hosts`);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("the launcher expands in a project's MCP url only variables tern may read", async () => {
  const ws = await tempWorkspace();
  try {
    await Deno.writeTextFile(
      join(ws.dir, ".mcp.json"),
      '{"servers":{"a":{"url":"${SECRET_URL}"},"b":{"url":"${NOT_SET:-https://fallback.test/m}"}}}',
    );
    const env = { HOME: "/nonexistent", TERN_HOME: ws.home, SECRET_URL: "https://internal.test" };
    const hosts = netHosts(env, { cwd: ws.dir });
    ok(!hosts.includes("internal.test") && hosts.includes("fallback.test"), `${hosts}`);
    const allowed = netHosts({ ...env, TERN_EXTRA_ENV: "SECRET_URL" }, { cwd: ws.dir });
    ok(allowed.includes("internal.test"), `${allowed}`);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("the launcher refuses a tern home or temp folder with a comma, and reads no option after --", async () => {
  const ws = await tempWorkspace();
  try {
    for (
      const [env, what] of [
        [{ HOME: "/nonexistent", TERN_HOME: "/var/tmp/My Stuff, Inc/.tern" }, "TERN_HOME"],
        [{ HOME: "/nonexistent", TERN_HOME: ws.home, TMPDIR: "/tmp/a,/home" }, "TMPDIR"],
      ] as const
    ) {
      const out = new Deno.Command("bash", {
        args: [
          "-c",
          `source "${ROOT}/bin/_env.sh"; tern_deno_flags; echo "\${TERN_DENO_FLAGS[@]}"`,
        ],
        env: { PATH: "/usr/bin:/bin", ...env },
        clearEnv: true,
        cwd: ws.dir,
      }).outputSync();
      equal(out.code, 2);
      match(decoder.decode(out.stderr), new RegExp(`^tern: ${what}.* holds a comma`));
      ok(!decoder.decode(out.stdout).includes("--allow-write"), decoder.decode(out.stdout));
    }
    // A task that starts with -C is the task's, after "--": the grants stay with this folder.
    const write = declaredFlags({ HOME: "/nonexistent", TERN_HOME: ws.home }, {
      cwd: ws.dir,
      args: ["run", "--", "-C/etc"],
    }).find((arg) => arg.startsWith("--allow-write="))!;
    ok(write.endsWith(`,${ws.dir}/.tern/memory`), write);
    // A relative TERN_HOME lies in the workspace (-C), as tern reads it.
    const other = await Deno.makeTempDir({ dir: ws.home });
    const relative = declaredFlags({ HOME: "/nonexistent", TERN_HOME: "th" }, {
      cwd: ws.dir,
      args: ["-C", other],
    }).find((arg) => arg.startsWith("--allow-write="))!;
    ok(relative.startsWith(`--allow-write=${other}/th,`), relative);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("the launcher reads no project file over 1 MiB (tern skips those too), sparse or dense", async () => {
  const ws = await tempWorkspace();
  try {
    const url = (host: string) =>
      JSON.stringify({ mcpServers: { x: { url: `https://${host}/mcp` } } });
    await Deno.mkdir(join(ws.dir, ".tern"));
    // Over the limit: a URL first, then 1 MiB of padding, and a 1 GiB sparse file.
    await Deno.writeTextFile(join(ws.dir, ".mcp.json"), url("big.test") + " ".repeat(1 << 20));
    await Deno.writeTextFile(join(ws.dir, ".env"), "TERN_BASE_URL=https://env-big.test\n");
    await Deno.truncate(join(ws.dir, ".env"), 1 << 30);
    // Within it: read as before.
    await Deno.writeTextFile(join(ws.dir, ".tern", "mcp.json"), url("small.test"));
    const out = new Deno.Command("bash", {
      args: ["-c", `source "${ROOT}/bin/_env.sh"; tern_net_hosts; echo "$TERN_NET_HOSTS"`],
      env: { PATH: "/usr/bin:/bin", HOME: "/nonexistent", TERN_HOME: ws.home },
      clearEnv: true,
      cwd: ws.dir,
    }).outputSync();
    const hosts = decoder.decode(out.stdout);
    ok(hosts.includes("small.test"), hosts);
    ok(!hosts.includes("big.test") && !hosts.includes("env-big.test"), hosts);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("bin/tern in a working folder that was removed says so, exit 2, with no trace", async () => {
  const root = await Deno.makeTempDir({ prefix: "tern-gone-cwd-" });
  try {
    const gone = join(root, "gone");
    const out = await new Deno.Command("/bin/sh", {
      args: [
        "-c",
        'mkdir "$1" && cd "$1" && rmdir "$1" && exec "$2" run hello',
        "sh",
        gone,
        join(
          ROOT,
          "bin",
          "tern",
        ),
      ],
      env: { PATH: "/usr/bin:/bin", HOME: root },
      clearEnv: true,
      stdin: "null",
    }).output();
    const stderr = decoder.decode(out.stderr);
    equal(out.code, 2, stderr);
    // (The shell that reads bin/tern may first say that it cannot find its folder.)
    match(stderr, /^tern: the current folder no longer exists .*cd to a folder/m);
    ok(!/backtrace|panicked/i.test(stderr), stderr);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
