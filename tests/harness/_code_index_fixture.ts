/** A small real workspace and the code index tools over it, for the code index tool tests. */
import { join } from "node:path";
import { LiveCodeIndex, type LiveIndexOptions } from "../../src/harness/code_index_live.ts";
import type { Observation } from "../../src/core/observation.ts";
import { createCodeSearchTool } from "../../src/tools/code_search.ts";
import { createCodeSymbolsTool } from "../../src/tools/code_symbols.ts";
import type { ToolContext } from "../../src/tools/define.ts";

/** Text that must never reach an answer: it sits where the index may not read. */
export const OUTSIDE = "OUTSIDEMARKER4b1e";
export const IGNORED = "IGNOREDMARKER90aa";

export const FILES: Record<string, string> = {
  "src/shapes.ts": `/** A shape that knows its area. */
export interface Shape {
  area(): number;
}

/** The base of every polygon. */
export class Polygon {
  sides(): number {
    return 0;
  }
}

/** A square, measured by its side. */
export class Square extends Polygon implements Shape {
  constructor(private side: number) {
    super();
  }
  area(): number {
    return computeArea(this.side, this.side);
  }
}

/** Multiplies width by height. */
export function computeArea(width: number, height: number): number {
  return width * height;
}
`,
  "src/report.ts": `import { computeArea } from "./shapes.ts";

/** Prints the total area of a floor plan. */
export function printFloorReport(rooms: number[][]): string {
  const total = rooms.reduce((sum, [w, h]) => sum + computeArea(w, h), 0);
  return \`total \${total}\`;
}
`,
  ".gitignore": "secret.ts\n",
  "secret.ts": `export function ${IGNORED}() { return computeArea(1, 1); }\n`,
};

export interface Fixture {
  dir: string;
  outside: string;
  ternHome: string;
  index: LiveCodeIndex;
  file: string;
  search(args: Record<string, unknown>, ctx?: Partial<ToolContext>): Promise<Observation>;
  symbols(args: Record<string, unknown>, ctx?: Partial<ToolContext>): Promise<Observation>;
}

/** Runs `fn` over a fresh workspace with FILES, a symlink out of it, and a live index. */
export async function withIndexFixture(
  fn: (fixture: Fixture) => Promise<void>,
  options: Partial<LiveIndexOptions> = {},
): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-idx-ws-" }));
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-idx-out-" }));
  const ternHome = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-idx-home-" }));
  for (const [path, text] of Object.entries(FILES)) {
    await Deno.mkdir(join(dir, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, path), text);
  }
  await Deno.writeTextFile(join(outside, "stolen.ts"), `export function ${OUTSIDE}() {}\n`);
  await Deno.symlink(join(outside, "stolen.ts"), join(dir, "src", "link.ts"));
  await Deno.symlink(outside, join(dir, "linked_dir"));
  const file = join(ternHome, "index", "ws.sqlite");
  const index = new LiveCodeIndex({ workspace: dir, file, ...options });
  const search = createCodeSearchTool(() => index);
  const symbols = createCodeSymbolsTool(() => index);
  const ctx = (extra: Partial<ToolContext> = {}): ToolContext => ({
    workspace: dir,
    signal: new AbortController().signal,
    ...extra,
  });
  try {
    await fn({
      dir,
      outside,
      ternHome,
      index,
      file,
      search: (args, extra) => search.run(args, ctx(extra)),
      symbols: (args, extra) => symbols.run(args, ctx(extra)),
    });
  } finally {
    await index.close();
    for (const path of [dir, outside, ternHome]) await Deno.remove(path, { recursive: true });
  }
}

/** The output of a call that must have succeeded. */
export function outputOf(observation: Observation): string {
  if (observation.status !== "SUCCEEDED") {
    throw new Error(`Expected success, got ${observation.code}: ${observation.message}`);
  }
  return observation.output;
}
