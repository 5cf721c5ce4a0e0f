/**
 * A repository's (or a command's) nested `AGENTS.md` that is a link to a file of the person's
 * holding keys: its text joins a tool's result after the result was masked, so it is not read at
 * all; a link to a Markdown file still is.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { MAX_NESTED_CONTEXT_DEPTH, nestedContextFiles } from "../../src/memory/context_files.ts";
import { READ_ALL } from "../support/read_all.ts";
import { runScriptedCalls } from "../support/scripted_calls.ts";

const HELD = "sk-heldkey0123456789abcdefghij";
const FORMAT = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

async function linkedWorkspace(root: string): Promise<string> {
  const dir = join(root, "ws");
  await Deno.mkdir(join(dir, "backend"), { recursive: true });
  await Deno.mkdir(join(dir, "sub"), { recursive: true });
  await Deno.mkdir(join(dir, "docs"), { recursive: true });
  await Deno.writeTextFile(join(dir, "backend", ".env"), `OTHER_KEY=${HELD}\nGH=${FORMAT}\n`);
  await Deno.writeTextFile(join(dir, "sub", "f.txt"), "hello");
  await Deno.symlink("../backend/.env", join(dir, "sub", "AGENTS.md"));
  return dir;
}

Deno.test("nestedContextFiles() refuses a nested context file that links to a file not Markdown", async () => {
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-nested-link-" }));
  try {
    const dir = await linkedWorkspace(root);
    await Deno.writeTextFile(join(dir, "docs", "pkg.md"), "shared rules");
    await Deno.mkdir(join(dir, "pkg"));
    await Deno.symlink("../docs/pkg.md", join(dir, "pkg", "CLAUDE.md"));
    const warnings: string[] = [];
    const warn = (line: string) => warnings.push(line);
    deepEqual(nestedContextFiles(dir, "sub/f.txt", new Set(), READ_ALL, warn), []);
    equal(warnings.length, 1, warnings.join("\n"));
    ok(warnings[0].includes("sub/AGENTS.md") && warnings[0].includes("Markdown"), warnings[0]);
    const shared = nestedContextFiles(dir, "pkg/x.ts", new Set(), READ_ALL, warn);
    deepEqual(shared.map((file) => file.text), ["shared rules"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("tern run sends no key of a file a nested AGENTS.md links to", async () => {
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-nested-link-run-" }));
  try {
    const dir = await linkedWorkspace(root);
    const home = join(root, "home");
    await Deno.mkdir(home);
    const run = await runScriptedCalls({ dir, home }, [
      { name: "read", args: { path: "sub/f.txt" } },
    ], { TERN_API_KEY: HELD });
    equal(run.code, 0, run.stderr);
    ok(run.results[0].includes("hello"), run.results[0]);
    ok(!run.requests.includes(HELD), "the held key reached the model");
    ok(!run.requests.includes(FORMAT), "the token reached the model");
    ok(run.stderr.includes("sub/AGENTS.md"), run.stderr);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("nestedContextFiles() looks no deeper than MAX_NESTED_CONTEXT_DEPTH, so a deep chain of folders costs little", async () => {
  const workspace = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-nested-deep-" }));
  try {
    // A repository's chain of 1,000 folders: every file was checked along its whole path, and
    // the first touch of the file at its end held tern's thread 38 s.
    const chain = Array(1_000).fill("a").join("/");
    await Deno.mkdir(join(workspace, chain), { recursive: true });
    await Deno.writeTextFile(join(workspace, chain, "f.txt"), "x");
    const near = Array(MAX_NESTED_CONTEXT_DEPTH).fill("a").join("/");
    await Deno.writeTextFile(join(workspace, near, "AGENTS.md"), "deepest read");
    const start = performance.now();
    const files = nestedContextFiles(workspace, `${chain}/f.txt`, new Set(), READ_ALL);
    const ms = performance.now() - start;
    deepEqual(files.map((file) => file.text), ["deepest read"]);
    ok(ms < 3_000, `took ${Math.round(ms)} ms`);
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
});

Deno.test("tern run masks the keys a nested AGENTS.md holds before its text joins a tool's result", async () => {
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-nested-keys-run-" }));
  try {
    // A command copied a file of keys into a nested context file (`cp settings.py sub/AGENTS.md`).
    const dir = join(root, "ws");
    await Deno.mkdir(join(dir, "sub"), { recursive: true });
    await Deno.writeTextFile(join(dir, "sub", "f.txt"), "hello");
    await Deno.writeTextFile(
      join(dir, "sub", "AGENTS.md"),
      `Use these.\nOTHER_KEY=${HELD}\nGH=${FORMAT}\n`,
    );
    const home = join(root, "home");
    await Deno.mkdir(home);
    const run = await runScriptedCalls({ dir, home }, [
      { name: "read", args: { path: "sub/f.txt" } },
    ], { TERN_API_KEY: HELD });
    equal(run.code, 0, run.stderr);
    ok(run.results[0].includes("Use these."), run.results[0]);
    ok(!run.requests.includes(HELD), "the held key reached the model");
    ok(!run.requests.includes(FORMAT), "the token reached the model");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
