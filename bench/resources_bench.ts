/**
 * The start-up cost of resource discovery (issue 23): `loadResources()` — SYSTEM.md,
 * APPEND_SYSTEM.md, AGENTS.md/CLAUDE.md from tern's home and every folder from the repository
 * root down to the workspace, the skills walk and the templates — in three repositories:
 *
 * - `empty`: a repository with no resource at all (the floor: the lstat/readdir probes);
 * - `nested-50`: 50 folders below the workspace, each with an AGENTS.md (a monorepo), plus 5
 *   skills and 5 templates; nested files are not read at start-up, only when a tool first
 *   touches their folder, which is timed separately (`first touch`);
 * - `deep-50`: the workspace 50 folders below the repository root, each with an AGENTS.md: the
 *   worst case at start-up, every one of them read into the prompt (up to the total cap).
 *
 * In-process, interleaved (empty, nested, deep, empty, …), median of the runs; the process
 * start of `tern context` is measured with farm-bench (see bench/results/resources.md).
 *
 *   deno run --allow-read --allow-write --allow-env bench/resources_bench.ts [runs]
 */
import { join } from "node:path";
import { loadResources } from "../src/memory/resources.ts";
import { nestedContextFiles } from "../src/memory/context_files.ts";
import { modelReadGuard } from "../src/harness/read_guard.ts";
import { stats } from "./_stats.ts";

const runs = Number(Deno.args[0] ?? 40);

function write(path: string, text: string): void {
  Deno.mkdirSync(join(path, ".."), { recursive: true });
  Deno.writeTextFileSync(path, text);
}

const RULES = "# Rules\n\n- Run the tests before you finish.\n- Use tabs.\n".repeat(8);

function makeRepos(root: string): Record<string, { workspace: string; home: string }> {
  const home = join(root, "home");
  Deno.mkdirSync(home);
  const empty = join(root, "empty");
  Deno.mkdirSync(join(empty, ".git"), { recursive: true });
  const nested = join(root, "nested");
  Deno.mkdirSync(join(nested, ".git"), { recursive: true });
  write(join(nested, "AGENTS.md"), RULES);
  for (let i = 0; i < 50; i++) {
    write(join(nested, "packages", `p${i}`, "AGENTS.md"), RULES);
    write(join(nested, "packages", `p${i}`, "src", "index.ts"), "export {};\n");
  }
  for (let i = 0; i < 5; i++) {
    write(
      join(nested, ".tern", "skills", `s${i}`, "SKILL.md"),
      `---\nname: s${i}\ndescription: Skill ${i} for a task\n---\nDo it.\n`,
    );
    write(join(nested, ".tern", "prompts", `t${i}.md`), `---\ndescription: T${i}\n---\nDo $1\n`);
  }
  const deepRoot = join(root, "deep");
  Deno.mkdirSync(join(deepRoot, ".git"), { recursive: true });
  let deep = deepRoot;
  for (let i = 0; i < 50; i++) {
    write(join(deep, "AGENTS.md"), RULES);
    deep = join(deep, `d${i}`);
  }
  Deno.mkdirSync(deep, { recursive: true });
  return {
    empty: { workspace: empty, home },
    "nested-50": { workspace: nested, home },
    "deep-50": { workspace: deep, home },
  };
}

const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "tern-resources-bench-" }));
try {
  const repos = makeRepos(root);
  const times: Record<string, number[]> = { "first touch (nested-50)": [] };
  const sizes: Record<string, string> = {};
  for (const name of Object.keys(repos)) times[name] = [];
  // One warm-up of each: module loading and the yaml import are not discovery.
  // The refusal a conversation makes (no deny rules: no matcher to load).
  const guard = (workspace: string, home: string) =>
    modelReadGuard({ workspace, ternHome: home, home, rules: [] });
  for (const { workspace, home } of Object.values(repos)) {
    await loadResources(workspace, home, await guard(workspace, home));
  }
  for (let run = 0; run < runs; run++) {
    for (const [name, { workspace, home }] of Object.entries(repos)) {
      const start = performance.now();
      const resources = await loadResources(workspace, home, await guard(workspace, home));
      times[name].push(performance.now() - start);
      sizes[name] = `${resources.files.context.length} context files, ` +
        `${resources.skills.length} skills, ${resources.templates.length} templates`;
    }
    const nested = repos["nested-50"].workspace;
    const start = performance.now();
    const refuse = await guard(nested, repos["nested-50"].home);
    const files = nestedContextFiles(
      nested,
      `packages/p${run % 50}/src/index.ts`,
      new Set(),
      refuse,
    );
    times["first touch (nested-50)"].push(performance.now() - start);
    if (files.length !== 1) throw new Error(`expected one nested file, got ${files.length}`);
  }
  console.log(`| repository | found | median ms | p90 ms | min ms |`);
  console.log(`| --- | --- | --- | --- | --- |`);
  for (const [name, list] of Object.entries(times)) {
    const s = stats(list);
    console.log(
      `| ${name} | ${sizes[name] ?? "1 AGENTS.md"} | ${s.median} | ${s.p90} | ${s.min} |`,
    );
  }
  if (Deno.env.get("KEEP_REPOS")) console.log(`repositories kept in ${root}`);
} finally {
  if (!Deno.env.get("KEEP_REPOS")) Deno.removeSync(root, { recursive: true });
}
