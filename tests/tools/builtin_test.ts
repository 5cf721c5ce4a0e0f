import { deepEqual, equal, ok } from "node:assert/strict";
import { createBuiltinTools } from "../../src/tools/builtin.ts";
import { createInProcessTools } from "../../src/tools/builtin_in_process.ts";
import {
  BUILTIN_MANIFEST,
  builtinLoader,
  builtinTools,
  IN_PROCESS_TOOLS,
} from "../../src/tools/mod.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { createBashTool } from "../../src/tools/bash.ts";
import { assertJsonSnapshot } from "./_snapshot.ts";
import { estimateRequestTokens, estimateTokens } from "../../src/context/tokens.ts";
import { knownSpecTokens } from "../../src/core/spec_tokens.ts";

Deno.test("createBuiltinTools() returns the sixteen tools in order with their capabilities", () => {
  const tools = createBuiltinTools();
  deepEqual(
    tools.map((t) => [t.name, t.readOnly, t.runsIn]),
    [
      ["read", true, "worker"],
      ["write", false, "worker"],
      ["edit", false, "worker"],
      ["multi_edit", false, "worker"],
      ["list", true, "worker"],
      ["glob", true, "worker"],
      ["grep", true, "worker"],
      ["bash", false, "sandbox"],
      ["process_list", true, "host"],
      ["process_logs", true, "host"],
      ["process_stop", true, "host"],
      ["code_search", true, "host"],
      ["code_symbols", true, "host"],
      ["web_fetch", true, "host"],
      ["web_search", true, "host"],
      ["get_search_content", true, "host"],
    ],
  );
  const registry = new ToolRegistry(tools);
  equal(registry.names.length, 16);
  // Only the code index tools say when to prefer them, for the system prompt.
  deepEqual(registry.guidance().map((line) => line.match(/`(\w+)`/)?.[1]), [
    "code_search",
    "code_symbols",
  ]);
});

Deno.test("createBuiltinTools() schemas, descriptions and capabilities match the start-up manifest", async () => {
  const specs = createBuiltinTools().map((tool) => ({
    name: tool.name,
    readOnly: tool.readOnly,
    runsIn: tool.runsIn,
    ...(tool.network ? { network: true } : {}),
    description: tool.description,
    parameters: tool.parameters,
    guidance: tool.guidance,
    ...(tool.subagentBase ? { subagentBase: true } : {}),
    // What the request's size check counts for the spec without estimating it again.
    tokens: estimateTokens(JSON.stringify({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
    })),
  }));
  await assertJsonSnapshot(
    new URL("../../src/tools/builtin_manifest.json", import.meta.url),
    specs,
  );
});

Deno.test("createBuiltinTools() schemas are strict objects", () => {
  for (const tool of createBuiltinTools()) {
    equal(tool.parameters.type, "object", tool.name);
    equal(tool.parameters.additionalProperties, false, tool.name);
  }
});

Deno.test("builtinTools() offers the manifest and runs the real implementation on first call", async () => {
  let loads = 0;
  const real = builtinLoader();
  const tools = builtinTools(() => {
    loads++;
    return real();
  });
  deepEqual(tools.map((t) => t.name), BUILTIN_MANIFEST.map((e) => e.name));
  equal(loads, 0);
  const workspace = await Deno.realPath(await Deno.makeTempDir());
  try {
    await Deno.writeTextFile(`${workspace}/a.txt`, "hello\n");
    const read = tools.find((t) => t.name === "read")!;
    const signal = new AbortController().signal;
    const ok = await read.run({ path: "a.txt" }, { workspace, signal });
    equal(ok.status, "SUCCEEDED");
    const bad = await read.run({ path: "a.txt", extra: 1 }, { workspace, signal });
    equal(bad.status === "ERROR" && bad.code, "INVALID_ARGUMENTS");
    equal(loads, 2);
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
});

Deno.test("builtinLoader() asked for bash first loads it alone, then the in-process tools, then every tool", async () => {
  const inProcess = [
    "bash",
    "process_list",
    "process_logs",
    "process_stop",
    "code_search",
    "code_symbols",
    "web_fetch",
    "web_search",
    "get_search_content",
  ];
  const load = builtinLoader();
  // `bash` asked for first loads alone: a first bash round waits for no other tool's code.
  deepEqual([...(await load("bash")).keys()], ["bash"]);
  deepEqual([...(await load("process_list")).keys()], inProcess);
  deepEqual([...(await load("read")).keys()].sort(), BUILTIN_MANIFEST.map((e) => e.name).sort());
  equal((await load("bash")).get("bash")?.name, "bash");
  const late = builtinLoader();
  await late("web_fetch");
  deepEqual([...(await late("bash")).keys()], inProcess, "once the others loaded, bash is theirs");
  deepEqual([...(await builtinLoader()(IN_PROCESS_TOOLS)).keys()], inProcess);
  deepEqual([...(await builtinLoader()("code_search")).keys()], inProcess);
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

Deno.test("the in-process tools and the conversation load neither SQLite, tree-sitter nor the index until a search", () => {
  const root = new URL("../../src/", import.meta.url).pathname;
  for (const file of ["tools/builtin_in_process.ts", "harness/conversation.ts"]) {
    const loaded = [...staticImports(`${root}${file}`)];
    ok(loaded.includes(`${root}tools/code_search.ts`) || file.startsWith("harness"), file);
    const heavy = loaded.filter((spec) =>
      spec === "node:sqlite" || spec.includes("tree-sitter") || spec.startsWith(`${root}index/`) ||
      spec.startsWith(`${root}harness/code_index`) && !spec.endsWith("code_index_tools.ts")
    );
    deepEqual(heavy, [], file);
  }
});

Deno.test("createInProcessTools() builds exactly the built-ins the manifest runs outside the worker", () => {
  const inProcess = createInProcessTools().map((tool) => tool.name).sort();
  const manifest = BUILTIN_MANIFEST.filter((entry) => entry.runsIn !== "worker")
    .map((entry) => entry.name).sort();
  deepEqual(inProcess, manifest);
  for (const tool of createInProcessTools()) equal(tool.runsIn === "worker", false, tool.name);
});

Deno.test("builtinTools() works out a bash call's paths without loading the file tools", async () => {
  const asked: (string | undefined)[] = [];
  const real = builtinLoader();
  const bash = builtinTools((name) => {
    asked.push(name);
    return real(name);
  }).find((tool) => tool.runsIn !== "worker")!;
  deepEqual(await bash.paths({ command: "ls" }), []);
  ok(asked.every((name) => name !== undefined), `asked for every tool: ${asked.join(",")}`);
});

Deno.test("builtinTools() tells the model the bash timeout it was configured with, as the tool applies it", () => {
  const manifestBash = BUILTIN_MANIFEST.find((entry) => entry.name === "bash")!;
  for (const configured of [5_000, 90_000, 900_000]) {
    const offered = builtinTools(builtinLoader({ bashTimeoutMs: configured }), {
      bashTimeoutMs: configured,
    }).find((tool) => tool.name === "bash")!;
    const real = createBashTool({ defaultTimeoutMs: configured });
    equal(offered.description, real.description);
    deepEqual(offered.parameters, real.parameters);
    const seconds = Math.min(configured, 600_000) / 1000;
    ok(offered.description.includes(`Timeout ${seconds} s by default`), offered.description);
    ok(offered.description !== manifestBash.description);
  }
  const plain = builtinTools(builtinLoader(), { bashTimeoutMs: 120_000 });
  equal(plain.find((tool) => tool.name === "bash")!.description, manifestBash.description);
  // Only bash changes.
  deepEqual(
    builtinTools(builtinLoader(), { bashTimeoutMs: 5_000 }).filter((tool) => tool.name !== "bash")
      .map((tool) => tool.description),
    BUILTIN_MANIFEST.filter((entry) => entry.name !== "bash").map((entry) => entry.description),
  );
});

Deno.test("the built-in specs' estimates known ahead are the estimator's, and only for the spec as the manifest has it", () => {
  const registry = new ToolRegistry(builtinTools(builtinLoader(), { bashTimeoutMs: 120_000 }));
  const specs = registry.specs();
  equal(specs.length, BUILTIN_MANIFEST.length);
  for (const spec of specs) {
    const known = knownSpecTokens(spec);
    equal(known, estimateTokens(JSON.stringify(spec)), spec.name);
    // The request's estimate counts what it would have estimated.
    equal(
      estimateRequestTokens([], [spec]),
      estimateRequestTokens([], [{ ...spec, parameters: structuredClone(spec.parameters) }]),
    );
  }
  // A bash stating another timeout, or a reworded tool, is estimated anew.
  const bash = new ToolRegistry(builtinTools(builtinLoader(), { bashTimeoutMs: 5_000 })).specs()
    .find((spec) => spec.name === "bash")!;
  equal(knownSpecTokens(bash), undefined);
  const read = specs.find((spec) => spec.name === "read")!;
  const reworded = { ...read, description: read.description + " ".repeat(400) + "x".repeat(4000) };
  equal(knownSpecTokens(reworded), undefined);
  ok(estimateRequestTokens([], [reworded]) > estimateRequestTokens([], [read]) + 100);
});
