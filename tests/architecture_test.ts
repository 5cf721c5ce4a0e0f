/** Keeps the layers one-way (DESIGN.md "Layers"): a module imports only its layer and below. */
import { deepEqual } from "node:assert/strict";
import { dirname, join, relative, resolve } from "node:path";

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
