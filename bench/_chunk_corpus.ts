/**
 * The files the chunker benchmarks read: every file of a workspace (the date-fns tree of
 * bench/index_speed.ts, or any folder), and the source texts the chunker's tests cut (the
 * template literals passed to chunkFile() in tests/index/, one per language at least).
 */
import { join, relative } from "node:path";

/** One file to chunk: a workspace-relative path and its text. */
export interface CorpusFile {
  path: string;
  text: string;
}

/** The default workspace: the copy of date-fns that bench/index_speed.ts makes. */
export const DATE_FNS = "/tmp/tern-bench-cache/speed-date-fns-4.1.0";

const TEST_FILES = [
  "tests/index/chunker_test.ts",
  "tests/index/chunker_more_test.ts",
  "tests/index/imported_calls_test.ts",
];

/** Every regular file under `root` (no symlinks followed), sorted by path; files over 4 MB left out. */
export async function workspaceFiles(root: string): Promise<CorpusFile[]> {
  const out: CorpusFile[] = [];
  const stack = [root];
  for (let dir = stack.pop(); dir !== undefined; dir = stack.pop()) {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) stack.push(path);
      else if (entry.isFile && (await Deno.stat(path)).size <= 4_000_000) {
        out.push({ path: relative(root, path), text: await Deno.readTextFile(path) });
      }
    }
  }
  return out.sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

/**
 * The texts the chunker's tests pass to chunkFile(), under the paths they give: a literal
 * argument, or a top-level `const NAME = \`…\`` it names. Template literals are evaluated on
 * their own: those that need the test's locals are left out.
 */
export async function testFixtures(repo: string): Promise<CorpusFile[]> {
  const out: CorpusFile[] = [];
  for (const file of TEST_FILES) {
    const source = await Deno.readTextFile(join(repo, file));
    const consts = new Map<string, string>();
    for (const match of source.matchAll(/^const ([A-Z_]+) = (`(?:[^`\\]|\\.)*`);/gms)) {
      consts.set(match[1], match[2]);
    }
    const call = /chunkFile\(\s*"([^"]+)",\s*(`(?:[^`\\]|\\.)*`|"(?:[^"\\]|\\.)*"|[A-Z_]+)/g;
    for (const match of source.matchAll(call)) {
      const literal = consts.get(match[2]) ?? match[2];
      if (!/^[`"]/.test(literal)) continue;
      try {
        out.push({ path: `fixtures/${match[1]}`, text: new Function(`return ${literal};`)() });
      } catch {
        // A literal that needs the test's locals is left out.
      }
    }
  }
  return out;
}
