/**
 * Keeps the layers one-way (DESIGN.md "Layers"): a module imports only its layer and below; and
 * keeps tools describing themselves: no code elsewhere decides by a tool's name.
 */
import { deepEqual, equal } from "node:assert/strict";
import { dirname, join, relative, resolve } from "node:path";
import { BUILTIN_MANIFEST } from "../src/tools/mod.ts";

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "..");
const SRC = join(ROOT, "src");

/**
 * The layers, top to bottom, read from ARCHITECTURE.md's "Layers" list (its `src/<folder>/`
 * lines), so the document and the rule are one list. `src/version.ts` counts as core.
 */
function documentedLayers(markdown: string): string[] {
  const section = markdown.split(/^## /m).find((part) => part.startsWith("Layers\n")) ?? "";
  const block = section.split("```")[1] ?? "";
  return [...block.matchAll(/^src\/([a-z_]+)\//gm)].map((match) => match[1]);
}

const LAYERS = documentedLayers(Deno.readTextFileSync(join(ROOT, "ARCHITECTURE.md")));

function layerOf(file: string): string {
  const rel = relative(SRC, file);
  const first = rel.split("/")[0];
  return rel.includes("/") ? first : "core";
}

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* sourceFiles(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

const IMPORT = /(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

Deno.test("ARCHITECTURE.md's layer list names every src/ folder once", () => {
  const folders = [...Deno.readDirSync(SRC)].filter((entry) => entry.isDirectory)
    .map((entry) => entry.name);
  deepEqual([...LAYERS].sort(), folders.sort());
  deepEqual(LAYERS.slice(-1), ["core"]);
});

Deno.test("src/ imports go down the layer list only", () => {
  const violations: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = layerOf(file);
    const text = Deno.readTextFileSync(file);
    for (const match of text.matchAll(IMPORT)) {
      const spec = match[1] ?? match[2];
      if (!spec.startsWith(".")) continue;
      const target = resolve(dirname(file), spec);
      if (!target.startsWith(SRC)) continue;
      const to = layerOf(target);
      if (!LAYERS.includes(from) || !LAYERS.includes(to)) {
        violations.push(`${relative(SRC, file)}: unknown layer "${from}" or "${to}"`);
      } else if (LAYERS.indexOf(to) < LAYERS.indexOf(from)) {
        violations.push(`${relative(SRC, file)} (${from}) imports ${spec} (${to})`);
      }
    }
  }
  deepEqual(violations, []);
});

/** Each src/ file with the src/ files it imports (static, type-only and dynamic imports). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const targets: string[] = [];
    for (const match of Deno.readTextFileSync(file).matchAll(IMPORT)) {
      const spec = match[1] ?? match[2];
      if (spec.startsWith(".")) targets.push(resolve(dirname(file), spec));
    }
    graph.set(file, targets.filter((target) => target.startsWith(SRC)));
  }
  return graph;
}

/** Every import cycle of `graph`, each as the files around it (`a.ts -> b.ts -> a.ts`). */
function importCycles(graph: Map<string, string[]>): string[] {
  const cycles: string[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string) => {
    const at = path.indexOf(file);
    if (at >= 0) {
      cycles.push([...path.slice(at), file].map((f) => relative(SRC, f)).join(" -> "));
      return;
    }
    if (done.has(file)) return;
    path.push(file);
    for (const target of graph.get(file) ?? []) visit(target);
    path.pop();
    done.add(file);
  };
  for (const file of [...graph.keys()].sort()) visit(file);
  return cycles;
}

Deno.test("src/ has no import cycles, also not inside one folder", () => {
  deepEqual(importCycles(importGraph()), []);
});

Deno.test("importCycles() names a two-file cycle inside one folder", () => {
  const a = join(SRC, "tui", "a.ts");
  const b = join(SRC, "tui", "b.ts");
  const c = join(SRC, "tui", "c.ts");
  deepEqual(importCycles(new Map([[a, [b, c]], [b, [a]], [c, []]])), [
    "tui/a.ts -> tui/b.ts -> tui/a.ts",
  ]);
});

/**
 * Ways a module picks tern's exit code: an error class's `exitCode` field, an `exitCode:` option
 * set to a number or constant, an exit code constant, or ending the process itself. A child
 * command's exit status (`details.exitCode: result.code`) is data and does not match.
 */
const CHOOSES_EXIT_CODE = [
  /\bexitCode\s*[:=]\s*(?:\d|[A-Z][A-Z0-9_]*\b)/,
  /\bconst\s+EXIT_(?!\w*_MS\b)\w+\s*=/,
  /\bDeno\.exitCode\s*=/,
  /\bDeno\.exit\(\s*[^)0\s]/,
];

/** src/ files outside cli/ that choose an exit code, with the line that does. */
function exitCodesOutsideCli(files: Iterable<string>): string[] {
  const found: string[] = [];
  for (const file of files) {
    if (relative(SRC, file).startsWith("cli/")) continue;
    Deno.readTextFileSync(file).split("\n").forEach((line, index) => {
      if (/^\s*(?:\/\/|\*|\/\*)/.test(line)) return;
      if (CHOOSES_EXIT_CODE.some((pattern) => pattern.test(line))) {
        found.push(`${relative(SRC, file)}:${index + 1}: ${line.trim()}`);
      }
    });
  }
  return found;
}

Deno.test("src/ chooses exit codes only in cli/ (errors carry data, exit_codes.ts maps them)", () => {
  deepEqual(exitCodesOutsideCli(sourceFiles(SRC)), []);
});

Deno.test("exitCodesOutsideCli() finds an error's exit code in a domain module", () => {
  const dir = Deno.makeTempDirSync({ prefix: "tern_exit_code_probe_" });
  try {
    const file = join(dir, "errors.ts");
    Deno.writeTextFileSync(
      file,
      [
        "export class BusyError extends Error {",
        "  override exitCode = 2;",
        "}",
        'throw new TernError("x", { exitCode: EXIT_USAGE });',
        "const EXIT_USAGE = 2;",
        "if (done) Deno.exit(130);",
        "const details = { exitCode: result.code };",
        "const EXIT_GRACE_MS = 2000;",
        "Deno.exit(0);",
      ].join("\n"),
    );
    const name = relative(SRC, file);
    deepEqual(exitCodesOutsideCli([file]), [
      `${name}:2: override exitCode = 2;`,
      `${name}:4: throw new TernError("x", { exitCode: EXIT_USAGE });`,
      `${name}:5: const EXIT_USAGE = 2;`,
      `${name}:6: if (done) Deno.exit(130);`,
    ]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("src/ imports only npm:, node: and relative specifiers", () => {
  const bad: string[] = [];
  for (const file of sourceFiles(SRC)) {
    for (const match of Deno.readTextFileSync(file).matchAll(IMPORT)) {
      const spec = match[1] ?? match[2];
      if (/^(jsr:|https?:)/.test(spec)) bad.push(`${relative(SRC, file)}: ${spec}`);
    }
  }
  deepEqual(bad, []);
});

/**
 * What a tool is, it says about itself (STYLE.md 8): outside a tool's own file no code decides
 * by a built-in tool's name. Flags a comparison of a name-like expression (`tool.name`,
 * `request.tool`, `name`) with a tool's name (`=== "bash"`), a Set of tool names, an array of
 * two or more tool names, a Set lookup of one (`.has("edit")`), and a test for the MCP prefix (`startsWith("mcp__")`) outside
 * src/mcp/. Words that are also tool names elsewhere (`action === "list"`, the grant kinds
 * `["read", "write", "hosts"]`, git's `["list"]`) are left alone.
 */
export function toolNameChecks(file: string, source: string, names: readonly string[]): string[] {
  const own = names.find((name) => file === `tools/${name}.ts`);
  const isName = (text: string) => names.includes(text) && text !== own;
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const found: string[] = [];
  const NAME_LIKE = /^(name|tool|toolName)$/;
  const ID = String.raw`[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)*`;
  const STR = String.raw`(["'\`])([\w-]+)\2`;
  const sides = [
    new RegExp(String.raw`(${ID})\s*[!=]==?\s*${STR}`, "g"),
    new RegExp(String.raw`${STR.replace("\\2", "\\1")}\s*[!=]==?\s*(${ID})`, "g"),
  ];
  for (const [index, pattern] of sides.entries()) {
    for (const match of code.matchAll(pattern)) {
      const [expression, literal] = index === 0 ? [match[1], match[3]] : [match[3], match[2]];
      const last = expression.split(/\??\./).pop()!;
      if (NAME_LIKE.test(last) && isName(literal)) found.push(`${file}: ${match[0]}`);
    }
  }
  const strings = (list: string) => {
    const items = list.split(",").map((item) => item.trim()).filter((item) => item !== "");
    const values = items.map((item) => /^(["'])([\w-]+)\1$/.exec(item)?.[2]);
    return values.every((value) => value !== undefined) ? values as string[] : [];
  };
  for (const match of code.matchAll(/new Set(?:<[^>]*>)?\(\s*\[([^\[\]]*)\]\s*\)/g)) {
    const values = strings(match[1]);
    if (values.length > 0 && values.every(isName)) found.push(`${file}: ${oneLine(match[0])}`);
  }
  for (const match of code.matchAll(/\[([^\[\]]*)\]/g)) {
    const values = strings(match[1]);
    if (values.length > 1 && values.every(isName)) found.push(`${file}: ${oneLine(match[0])}`);
  }
  for (const match of code.matchAll(/\.has\(\s*(["'`])([\w-]+)\1\s*\)/g)) {
    if (isName(match[2])) found.push(`${file}: ${match[0]}`);
  }
  if (!file.startsWith("mcp/")) {
    for (const match of code.matchAll(/\.startsWith\(\s*["'`]mcp__/g)) {
      found.push(`${file}: ${match[0]}`);
    }
  }
  return [...new Set(found)];
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ");
}

const TOOL_NAMES = BUILTIN_MANIFEST.map((entry) => entry.name);

Deno.test("src/ decides nothing by a tool's name outside the tool's own file", () => {
  const found = [...sourceFiles(SRC)].flatMap((file) =>
    toolNameChecks(relative(SRC, file), Deno.readTextFileSync(file), TOOL_NAMES)
  );
  deepEqual(found, []);
});

Deno.test("toolNameChecks() flags name comparisons and name lists, not words that match", () => {
  const flagged = [
    'if (tool.name === "bash") run();',
    'const x = "edit" !== request.tool;',
    'if (tool !== "write" && tool !== "edit") return;',
    'const SET = new Set(["bash"]);',
    'const S: ReadonlySet<string> = new Set<string>([\n  "read",\n  "write",\n]);',
    'const LIST = ["glob", "grep"];',
    'const mcp = name.startsWith("mcp__");',
    'if (REFUSED.has("bash")) return;',
  ];
  for (const code of flagged) {
    equal(toolNameChecks("agent/x.ts", code, TOOL_NAMES).length > 0, true, code);
  }
  const legitimate = [
    'if (line.action === "list") return 0;',
    'for (const key of ["read", "write", "hosts", "env", "commands"]) {}',
    'subcommandIn(args, ["list"], "worktree");',
    'if (body.type === "list") walk();',
    '// tool.name === "bash" in a comment',
    'if (rule.tool === "*") return;',
  ];
  for (const code of legitimate) {
    deepEqual(toolNameChecks("agent/x.ts", code, TOOL_NAMES), [], code);
  }
  deepEqual(toolNameChecks("tools/bash.ts", 'if (name === "bash") {}', TOOL_NAMES), []);
  deepEqual(toolNameChecks("mcp/tool_names.ts", 'n.startsWith("mcp__")', TOOL_NAMES), []);
});
