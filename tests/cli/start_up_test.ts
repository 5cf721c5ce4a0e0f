/**
 * How bin/tern starts tern: the bundle of bin/build while it is fresh (else main.ts), a Deno
 * cache of its own whatever HOME is, and no host contacted but the model's; and
 * src/core/source_url.ts, which names source files the same from `src/` and from the bundle.
 */
import { deepEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { declaredFlags, ROOT, tempWorkspace } from "../support/tern_process.ts";
import { runLauncher } from "../support/launcher.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

const decoder = new TextDecoder();

/**
 * A checkout of its own: the real bin/tern and bin/_env.sh, a main.ts and a bundle entry that
 * each print which one ran and the DENO_DIR they got, and a source file.
 */
async function fakeCheckout(): Promise<
  { root: string; run(env?: Record<string, string>): string }
> {
  const root = await Deno.makeTempDir({ prefix: "tern-start-" });
  await Deno.mkdir(join(root, "bin"));
  await Deno.mkdir(join(root, "src/core"), { recursive: true });
  await Deno.mkdir(join(root, ".tools/bundle"), { recursive: true });
  for (const file of ["bin/tern", "bin/_env.sh"]) {
    await Deno.copyFile(join(ROOT, file), join(root, file));
  }
  const say = (who: string) => `console.log("${who}", Deno.env.get("DENO_DIR"));\n`;
  await Deno.writeTextFile(join(root, "main.ts"), say("source"));
  await Deno.writeTextFile(join(root, ".tools/bundle/main.js"), say("bundle"));
  await Deno.writeTextFile(join(root, "src/core/a.ts"), "export const a = 1;\n");
  await Deno.writeTextFile(join(root, "deno.json"), "{}\n");
  await Deno.writeTextFile(join(root, "deno.lock"), `{ "version": "5" }\n`);
  const run = (env: Record<string, string> = {}) => {
    const out = new Deno.Command(join(root, "bin/tern"), {
      args: ["--help"],
      cwd: root,
      env: {
        PATH: "/usr/bin:/bin",
        HOME: join(root, "home"),
        TERN_DENO_BIN: Deno.execPath(),
        ...env,
      },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
    equal(out.code, 0, decoder.decode(out.stderr));
    return decoder.decode(out.stdout).trim();
  };
  return { root, run };
}

/** Sets the modification time of each path to `seconds` after the epoch. */
async function setTimes(paths: string[], seconds: number): Promise<void> {
  for (const path of paths) await Deno.utime(path, seconds, seconds);
}

Deno.test("bin/tern starts the bundle while no source file is newer than its build, else main.ts", async () => {
  const { root, run } = await fakeCheckout();
  try {
    const sources = ["main.ts", "deno.json", "deno.lock", "src", "src/core", "src/core/a.ts"]
      .map((path) => join(root, path));
    const stamp = join(root, ".tools/bundle/stamp");
    // No stamp: bin/build never finished.
    await setTimes(sources, 1_000_000);
    equal(run().split(" ")[0], "source");
    await Deno.writeTextFile(stamp, "");
    await setTimes([stamp], 2_000_000);
    equal(run().split(" ")[0], "bundle");
    equal(run({ TERN_NO_BUNDLE: "1" }).split(" ")[0], "source");
    // A file saved after the build, at any depth, then a file added (its folder changes).
    for (const path of ["src/core/a.ts", "main.ts", "deno.lock", "src/core"]) {
      await setTimes([join(root, path)], 3_000_000);
      equal(run().split(" ")[0], "source", `${path} is newer than the build`);
      await setTimes([join(root, path)], 1_000_000);
      equal(run().split(" ")[0], "bundle");
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("bin/tern gives tern a Deno cache in the checkout whatever HOME is, unless DENO_DIR is set", async () => {
  const { root, run } = await fakeCheckout();
  const mine = await Deno.makeTempDir({ prefix: "tern-deno-dir-" });
  try {
    const own = ["source", join(root, ".tools/deno")];
    deepEqual(run().split(" "), own);
    deepEqual(run({ HOME: "/nonexistent" }).split(" "), own);
    deepEqual(run({ DENO_DIR: mine }).split(" "), ["source", mine]);
    // Where the repository (the working folder here) ships files and commands write, a cache
    // would hold code tern runs: tern keeps its own, also for a relative one or a link there.
    await Deno.mkdir(join(root, "cache"));
    await Deno.symlink(join(root, "cache"), join(mine, "link"));
    for (const dir of [join(root, "cache"), "cache", "./", join(mine, "link", "deno")]) {
      deepEqual(run({ DENO_DIR: dir }).split(" "), own, dir);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(mine, { recursive: true });
  }
});

Deno.test("sourceUrl() names the same file from src/core/ and from .tools/bundle/", async () => {
  const root = await Deno.makeTempDir({ prefix: "tern-source-url-" });
  try {
    const urls: string[] = [];
    for (const folder of ["src/core", ".tools/bundle"]) {
      await Deno.mkdir(join(root, folder), { recursive: true });
      const copy = join(root, folder, "source_url.ts");
      await Deno.copyFile(join(ROOT, "src/core/source_url.ts"), copy);
      const { sourceUrl } = await import(`file://${copy}`);
      urls.push(sourceUrl("src/tools/worker_handler.ts").href);
    }
    deepEqual(urls, Array(2).fill(`file://${root}/src/tools/worker_handler.ts`));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

testWith([bwrapNeed], "bin/tern with a fresh HOME contacts no host but the model's", async () => {
  // Deno's own downloads (npm metadata) honour HTTPS_PROXY: a listener there sees every try.
  const proxy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let contacted = 0;
  const accepting = (async () => {
    for await (const conn of proxy) {
      contacted++;
      conn.close();
    }
  })();
  let round = 0;
  const server = await startScriptedServer(() =>
    round++ === 0
      ? { toolCalls: [{ id: "c0", name: "bash", arguments: '{"command":"echo hi"}' }] }
      : { text: "done" }
  );
  const ws = await tempWorkspace();
  try {
    const args = [
      "run",
      "--base-url",
      server.baseUrl,
      "--mode",
      "bypass",
      "--output",
      "json",
      "hi",
    ];
    const out = await runLauncher(args, {
      cwd: ws.dir,
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: ws.home,
        TERN_HOME: ws.home,
        HTTPS_PROXY: `http://127.0.0.1:${(proxy.addr as Deno.NetAddr).port}`,
      },
    });
    equal(out.code, 0, out.stderr);
    equal(JSON.parse(out.stdout).text, "done");
    equal(server.requests.length, 2);
    equal(contacted, 0, "tern (or Deno for it) tried to reach a host through the proxy");
  } finally {
    proxy.close();
    await accepting.catch(() => {});
    await server.close();
    await ws.cleanup();
  }
});

/** The modules a bundle file imports statically (`import … from "./x.js"`, `import "./x.js"`). */
function bundleImports(dir: string, file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = Deno.readTextFileSync(join(dir, file));
  for (const [, spec] of text.matchAll(/^import\s+(?:[^;]*?\sfrom\s+)?"([^"]+)"/gms)) {
    if (spec.startsWith("./")) bundleImports(dir, spec.slice(2), seen);
    else seen.add(spec);
  }
  return seen;
}

const BUNDLE = join(ROOT, ".tools/bundle");

Deno.test({
  name: "the bundle's main.js loads no Node module before main() (node:module costs every run)",
  // bin/setup builds the bundle (CI runs it first); a checkout without one has nothing to check.
  ignore: (() => {
    try {
      return !Deno.statSync(join(BUNDLE, "main.js")).isFile;
    } catch {
      return true;
    }
  })(),
  fn: () => {
    const loaded = [...bundleImports(BUNDLE, "main.js")];
    deepEqual(loaded.filter((spec) => spec.startsWith("node:") || spec.startsWith("npm:")), []);
  },
});

/** The modules `file` loads when imported: static value imports, followed through src/. */
function staticImports(file: string, seen = new Set<string>()): Set<string> {
  const text = Deno.readTextFileSync(file);
  // `import type` and `export type` load nothing; dynamic import() loads later.
  const pattern = /^(?:import|export)\s+(?!type\s)(?:[^;]*?\sfrom\s+)?["']([^"']+)["']/gms;
  for (const [, spec] of text.matchAll(pattern)) {
    const target = spec.startsWith(".") ? new URL(spec, `file://${file}`).pathname : spec;
    if (seen.has(target)) continue;
    seen.add(target);
    if (spec.startsWith(".") && target.endsWith(".ts")) staticImports(target, seen);
  }
  return seen;
}

Deno.test("tern run reaches its first model request without loading zod or the tool code", () => {
  const loaded = [...staticImports(join(ROOT, "src/cli/run.ts"))];
  // zod comes with the tools' schemas, which load while the first request is out (preload).
  const heavy = ["/src/core/zod.ts", "/src/tools/define.ts"];
  deepEqual(
    loaded.filter((spec) => spec === "zod" || heavy.some((path) => spec.endsWith(path))),
    [],
  );
});

/** The relative `import("…")` targets in `file`, as absolute paths. */
function dynamicImports(file: string): string[] {
  const text = Deno.readTextFileSync(file);
  return [...text.matchAll(/import\(\s*"(\.[^"]+)"\s*\)/g)]
    .map(([, spec]) => new URL(spec, `file://${file}`).pathname);
}

Deno.test("what tern run always loads before its first request comes in one import(), not one each", () => {
  // Each import() is a module-graph load of its own for Deno (about 0.3 ms in the bundle,
  // however small: bench/results/first_request_limits.md). Connecting a session loads
  // session_parts.ts once; these modules, which every run uses on its way to the first
  // request, come with it, so none of the path's modules may import one of them on its own.
  const always = [
    "src/harness/models.ts",
    "src/harness/conversation.ts",
    "src/harness/mcp_setup.ts",
    "src/memory/facts.ts",
    "src/harness/subagents/host.ts",
    "src/harness/subagents/tool_specs.ts",
    "src/harness/subagents/models.ts",
    "src/mcp/config.ts",
    "src/config/workspace_file.ts",
    "src/llm/setup.ts",
    "src/sandbox/hooks/load.ts",
    "src/harness/rewind/turn_checkpoints.ts",
  ].map((path) => join(ROOT, path));
  const parts = staticImports(join(ROOT, "src/harness/session_parts.ts"));
  deepEqual(always.filter((path) => !parts.has(path)), [], "session_parts.ts leaves these out");
  const path = new Set([...staticImports(join(ROOT, "src/cli/run.ts")), ...parts]);
  const separate = [...path].filter((file) => file.endsWith(".ts")).flatMap((file) =>
    dynamicImports(file).filter((target) => always.includes(target)).map((target) =>
      `${file.slice(ROOT.length + 1)} imports ${target.slice(ROOT.length + 1)}`
    )
  );
  deepEqual(separate, []);
});

Deno.test("the tool worker loads each tool at its first call, and a reading tool without the diff package", () => {
  const handler = [...staticImports(join(ROOT, "src/tools/worker_handler.ts"))];
  const tools = ["read", "write", "edit", "multi_edit", "list", "glob", "grep", "bash", "builtin"];
  deepEqual(
    handler.filter((spec) => tools.some((tool) => spec.endsWith(`/src/tools/${tool}.ts`))),
    [],
  );
  for (const tool of ["read", "grep", "list", "glob"]) {
    const loaded = [...staticImports(join(ROOT, `src/tools/${tool}.ts`))];
    deepEqual(loaded.filter((spec) => spec === "diff"), [], `${tool} loads the diff package`);
  }
});

Deno.test("a sandbox opens before the gate's code loads, and the rules' matcher loads only with rules", () => {
  const opening = [...staticImports(join(ROOT, "src/harness/agent_sandbox.ts"))];
  // The gate's half (agent_gate.ts) is a dynamic import, loading while the runtime opens.
  const gate = ["/src/harness/agent_gate.ts", "/src/agent/permission_gate.ts", "/src/tools/mod.ts"];
  deepEqual(opening.filter((spec) => gate.some((path) => spec.endsWith(path))), []);
  const gated = [...staticImports(join(ROOT, "src/harness/agent_gate.ts"))];
  deepEqual([...opening, ...gated].filter((spec) => spec === "picomatch"), []);
});

/**
 * A module run before tern's (`deno run --preload`) that tells on stderr, at the first `fetch`
 * (the model request), whether zod has been evaluated: zod marks `globalThis` when it loads.
 */
const ZOD_PROBE = `
const fetchFirst = globalThis.fetch;
let told = false;
globalThis.fetch = (...args) => {
  if (!told) {
    told = true;
    console.error("PROBE zod=" + ("__zod_globalConfig" in globalThis));
  }
  return fetchFirst(...args);
};
`;

Deno.test("tern run sends its first model request before zod is evaluated (no skills, no MCP)", async () => {
  const out = await runWithProbe(ZOD_PROBE, [{ text: "done" }]);
  equal(out.code, 0, out.stderr);
  equal(JSON.parse(out.stdout).text, "done");
  deepEqual(out.stderr.match(/PROBE zod=\w+/g), ["PROBE zod=false"], out.stderr);
});

/** {@linkcode ZOD_PROBE} told at every model request, not only the first. */
const ZOD_PROBE_EACH = ZOD_PROBE.replace("if (!told) {", "{");

testWith([bwrapNeed], "bash calls with well-formed arguments never evaluate zod", async () => {
  const call = (id: string, args: Record<string, unknown>): ScriptedReply => ({
    toolCalls: [{ id, name: "bash", arguments: JSON.stringify(args) }],
  });
  const out = await runWithProbe(ZOD_PROBE_EACH, [
    call("c1", { command: "echo first" }),
    call("c2", { command: "echo second", timeout_ms: 5000, description: "says second" }),
    { text: "done" },
  ]);
  equal(out.code, 0, out.stderr);
  equal(JSON.parse(out.stdout).text, "done");
  deepEqual(out.stderr.match(/PROBE zod=\w+/g), Array(3).fill("PROBE zod=false"), out.stderr);
});

testWith(
  [bwrapNeed],
  "a bash call with malformed arguments loads zod to word the error",
  async () => {
    const out = await runWithProbe(ZOD_PROBE_EACH, [
      { toolCalls: [{ id: "c1", name: "bash", arguments: JSON.stringify({ command: "" }) }] },
      { text: "done" },
    ]);
    equal(out.code, 0, out.stderr);
    deepEqual(
      out.stderr.match(/PROBE zod=\w+/g),
      ["PROBE zod=false", "PROBE zod=true"],
      out.stderr,
    );
  },
);

/**
 * `tern run --mode bypass -o json hi` from main.ts with bin/tern's declared flags, against a
 * scripted model answering `replies`, with the module `probe` run first (`--preload`).
 */
async function runWithProbe(
  probe: string,
  replies: ScriptedReply[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const server = await startScriptedServer(replies);
  const ws = await tempWorkspace();
  const probeFile = join(ws.home, "probe.js");
  await Deno.writeTextFile(probeFile, probe);
  try {
    const env = { HOME: ws.home, TERN_HOME: ws.home };
    const args = [
      "run",
      "--base-url",
      server.baseUrl,
      "--mode",
      "bypass",
      "--output",
      "json",
      "hi",
    ];
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...declaredFlags(env, { cwd: ws.dir, args }),
        "--preload",
        probeFile,
        join(ROOT, "main.ts"),
        ...args,
      ],
      cwd: ws.dir,
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    return {
      code: out.code,
      stdout: decoder.decode(out.stdout),
      stderr: decoder.decode(out.stderr),
    };
  } finally {
    await server.close();
    await ws.cleanup();
  }
}

/** The source files under src/ whose text matches `pattern`, but `except`. */
async function sourcesMatching(pattern: RegExp, except: string[] = []): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) await walk(path);
      else if (/\.tsx?$/.test(entry.name) && !except.some((file) => path.endsWith(file))) {
        if (pattern.test(await Deno.readTextFile(path))) found.push(path);
      }
    }
  };
  await walk(join(ROOT, "src"));
  return found;
}

Deno.test("src/ imports zod only through src/core/zod.ts (zod's own `z` keeps all its locales)", async () => {
  deepEqual(await sourcesMatching(/from\s+["']zod(\/[^"']*)?["']/, ["src/core/zod.ts"]), []);
});

Deno.test("src/ imports neither node:path nor node:util (each loads Deno's Node layer)", async () => {
  // `import type` loads nothing.
  deepEqual(await sourcesMatching(/^import\s+(?!type\s)[^;]*["']node:(path|util)["']/m), []);
});

Deno.test("the modules of a bash round import no Node built-in (node:url loaded Deno's Node layer)", () => {
  const roots = [
    "src/cli/run.ts",
    "src/harness/conversation.ts",
    "src/harness/agent_sandbox.ts",
    "src/harness/agent_gate.ts",
    "src/harness/rewind/turn_checkpoints.ts",
    "src/sandbox/prewarm.ts",
    "src/sandbox/runtime.ts",
    "src/tools/bash.ts",
  ];
  for (const root of roots) {
    const loaded = [...staticImports(join(ROOT, root))];
    deepEqual(loaded.filter((spec) => spec.startsWith("node:")), [], root);
  }
});

Deno.test("the interactive start imports no Node built-in before its first frame (node:fs costs it)", () => {
  const loaded = [...staticImports(join(ROOT, "src/cli/interactive/start.ts"))];
  deepEqual(loaded.filter((spec) => spec.startsWith("node:")), []);
});

/**
 * A module run before tern's (`deno run --preload`) that tells on stderr where Node's timers
 * were first reached: Deno's global `setTimeout` and its kin are Node's, loaded at first touch.
 */
const TIMERS_PROBE = `
for (const name of ["setTimeout", "clearTimeout", "setInterval", "clearInterval"]) {
  const described = Object.getOwnPropertyDescriptor(globalThis, name);
  let told = false;
  Object.defineProperty(globalThis, name, {
    configurable: true,
    get() {
      if (!told) {
        told = true;
        console.error("PROBE " + name + " " + new Error().stack.split("\\n").slice(2, 5).join(" "));
      }
      return described.get ? described.get.call(globalThis) : described.value;
    },
    set(value) {
      Object.defineProperty(globalThis, name, { configurable: true, writable: true, value });
    },
  });
}
`;

testWith([bwrapNeed], "tern run's sandboxed bash rounds do not touch Node's timers", async () => {
  const echo = (n: number) => ({
    toolCalls: [{ id: `c${n}`, name: "bash", arguments: JSON.stringify({ command: `echo ${n}` }) }],
  });
  const out = await runWithProbe(TIMERS_PROBE, [echo(0), echo(1), { text: "done" }]);
  equal(out.code, 0, out.stderr);
  const result = JSON.parse(out.stdout);
  equal(result.text, "done");
  equal(result.toolCalls, 2);
  deepEqual(out.stderr.match(/PROBE .*/g), null, out.stderr);
});
