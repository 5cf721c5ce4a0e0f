/** Keeps the layers one-way (DESIGN.md "Layers"): a module imports only its layer and below. */
import { deepEqual } from "node:assert/strict";
import { dirname, join, relative, resolve } from "node:path";

/** Top to bottom. `src/version.ts` counts as core. */
const LAYERS = [
  "cli",
  "harness",
  "tui",
  "agent",
  "plan",
  "session",
  "context",
  "llm",
  "tools",
  "sandbox",
  "mcp",
  "resources",
  "memory",
  "search",
  "runtime",
  "config",
  "core",
];

const SRC = resolve(dirname(new URL(import.meta.url).pathname), "../src");

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
