/** IgnoreRules and walk(): nested .gitignore precedence, spellings of a path, folders without rules. */
import { deepEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import {
  GITIGNORE_LIMITS,
  IgnoreRules,
  MAX_GLOBSTARS,
  walk,
} from "../../src/tools/ignore_rules.ts";
import { openUnchanged } from "../../src/core/verified_open.ts";

async function withTree(files: Record<string, string>, body: (root: string) => Promise<void>) {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-ignore-" }));
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(join(root, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(root, path), text);
  }
  try {
    await body(root);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

const TREE = {
  ".gitignore": "*.log\nbuild/\n",
  "a/.gitignore": "!keep.log\n",
  "a/keep.log": "",
  "a/drop.log": "",
  "a/b/deep.log": "",
  "a/b/code.ts": "",
  "build/out.js": "",
  "src/main.ts": "",
  ".git/HEAD": "",
};

Deno.test("walk() applies nested .gitignore files, deeper ones winning, and never enters .git", async () => {
  await withTree(TREE, async (root) => {
    const found: string[] = [];
    for await (const entry of walk(root, new IgnoreRules(root))) {
      if (entry.isFile) found.push(entry.path.slice(root.length + 1));
    }
    deepEqual(found, [".gitignore", "a/.gitignore", "a/b/code.ts", "a/keep.log", "src/main.ts"]);
  });
});

Deno.test("IgnoreRules.ignores() answers alike for any spelling of a path", async () => {
  await withTree(TREE, async (root) => {
    const rules = new IgnoreRules(root);
    for await (const _ of walk(root, rules)) { /* loads every folder's rules */ }
    for (
      const [rel, ignored] of [["a/drop.log", true], ["a/keep.log", false], [
        "src/main.ts",
        false,
      ]] as const
    ) {
      for (
        const spelling of [
          `${root}/${rel}`,
          `${root}//${rel}`,
          `${root}/./${rel}`,
          `${root}/src/../${rel}`,
        ]
      ) {
        equal(rules.ignores(spelling, false), ignored, spelling);
      }
    }
    equal(rules.ignores(`${root}/build`, true), true);
    equal(rules.ignores(`${root}/a/.git/config`, false), true);
  });
});

Deno.test("walk() from a folder spelled with a trailing slash yields clean paths", async () => {
  await withTree({ "x/y.ts": "" }, async (root) => {
    const found: string[] = [];
    for await (const entry of walk(`${root}/`, new IgnoreRules(root))) found.push(entry.path);
    deepEqual(found, [`${root}/x`, `${root}/x/y.ts`]);
  });
});

Deno.test("walk() reaches the bottom of a folder chain nested deeper than a call stack recurses", async () => {
  await withTree({ ".gitignore": "*.log\n" }, async (root) => {
    // As deep as a path can name (Linux's PATH_MAX is 4,096 bytes): about 2,000 levels.
    const levels = Math.floor((4_000 - root.length) / 2);
    const bottom = join(root, ...Array(levels).fill("a"));
    await Deno.mkdir(bottom, { recursive: true });
    await Deno.writeTextFile(join(bottom, "end.ts"), "");
    // In a process with a 200 KB call stack: a walk that recursed per level ran out of it about
    // 300 levels down (and a code_search with the default stack, some 1,500 down).
    const walker = new URL("../../src/tools/ignore_rules.ts", import.meta.url).href;
    const code = `import { IgnoreRules, walk } from ${JSON.stringify(walker)};
      const root = ${JSON.stringify(root)};
      let deepest = 0, end = false;
      for await (const entry of walk(root, new IgnoreRules(root))) {
        deepest = Math.max(deepest, entry.depth);
        if (entry.name === "end.ts") end = true;
      }
      console.log(JSON.stringify({ deepest, end }));`;
    const config = new URL("../../deno.json", import.meta.url).pathname;
    const { code: exit, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--quiet", "--config", config, "--v8-flags=--stack-size=200", code],
    }).output();
    const said = new TextDecoder().decode(stderr);
    equal(exit, 0, said);
    deepEqual(JSON.parse(new TextDecoder().decode(stdout)), { deepest: levels + 1, end: true });
  });
});

Deno.test("a .gitignore past its limits is used up to them: its first patterns, not the rest", async () => {
  const filler = Array.from({ length: GITIGNORE_LIMITS.patterns - 1 }, (_, i) => `p${i}`);
  const long = ["*.log", ...filler, "late.txt", ""].join("\n");
  // A file larger than the byte limit: its cut last line is not read as a pattern either.
  const big = "*.tmp\n" + "#".repeat(GITIGNORE_LIMITS.bytes) + "\nhuge.txt\n";
  await withTree({
    ".gitignore": long,
    "a.log": "",
    "late.txt": "",
    "sub/.gitignore": big,
    "sub/b.tmp": "",
    "sub/huge.txt": "",
  }, async (root) => {
    const seen = [];
    for await (const entry of walk(root, new IgnoreRules(root))) {
      if (entry.isFile) seen.push(entry.path.slice(root.length + 1));
    }
    deepEqual(seen.sort(), [".gitignore", "late.txt", "sub/.gitignore", "sub/huge.txt"]);
  });
});

Deno.test("openUnchanged() refuses a FIFO or a symlink swapped in after the check, without waiting", async () => {
  await withTree({ ".gitignore": "*.log\n", "other": "elsewhere\n" }, async (root) => {
    const path = join(root, ".gitignore");
    const checked = Deno.lstatSync(path);
    const same = openUnchanged(path, checked);
    equal(new TextDecoder().decode(same?.head(100)), "*.log\n");
    same?.close();
    // Swapped for a FIFO: a blocking open would wait for a writer for ever.
    let waited = false;
    const timer = setTimeout(() => {
      waited = true;
      Deno.open(path, { write: true }).then((file) => file.close(), () => {});
    }, 3_000);
    try {
      // The checked file is kept aside, so no new file can get its inode.
      await Deno.rename(path, `${path}.checked`);
      equal((await new Deno.Command("mkfifo", { args: [path] }).output()).code, 0);
      equal(openUnchanged(path, checked), null);
      equal(waited, false, "the open waited on the FIFO");
    } finally {
      clearTimeout(timer);
    }
    // Swapped for a symlink to another file, or for another regular file.
    await Deno.remove(path);
    await Deno.symlink(join(root, "other"), path);
    equal(openUnchanged(path, checked), null);
    await Deno.remove(path);
    await Deno.writeTextFile(path, "*.tmp\n");
    equal(openUnchanged(path, checked), null);
  });
});

Deno.test(`a .gitignore pattern with more than ${MAX_GLOBSTARS} "**" is not used, so it cannot stall a walk`, async () => {
  await withTree({
    // Three "**": tried in depth^3 ways per path (ten such run for hours); not used.
    ".gitignore": "**/x/**/y/**/z.txt\n**/gen/**\n",
    "x/y/z.txt": "",
    "gen/out.js": "",
    "src/main.ts": "",
  }, async (root) => {
    const seen = [];
    for await (const entry of walk(root, new IgnoreRules(root))) {
      if (entry.isFile) seen.push(entry.path.slice(root.length + 1));
    }
    deepEqual(seen.sort(), [".gitignore", "src/main.ts", "x/y/z.txt"]);
  });
});

Deno.test("IgnoreRules past its total patterns treats the next folders with a .gitignore as ignored and names them", async () => {
  const per = GITIGNORE_LIMITS.patterns;
  const text = [...Array.from({ length: per - 1 }, (_, i) => `p${i}`), "*.log"].join("\n");
  const folders = Math.floor(GITIGNORE_LIMITS.totalPatterns / per);
  const files: Record<string, string> = { "z/plain.ts": "" };
  for (let i = 0; i <= folders; i++) {
    files[`f${i}/.gitignore`] = text;
    files[`f${i}/x.log`] = "";
    files[`f${i}/keep.ts`] = "";
  }
  await withTree(files, async (root) => {
    const rules = new IgnoreRules(root);
    const seen = [];
    for await (const entry of walk(root, rules)) {
      if (entry.isFile) seen.push(entry.path.slice(root.length + 1));
    }
    const expected = ["z/plain.ts"];
    for (let i = 0; i < folders; i++) expected.push(`f${i}/.gitignore`, `f${i}/keep.ts`);
    deepEqual(seen.sort(), expected.sort());
    deepEqual(rules.overBudget, [join(root, `f${folders}`)]);
  });
});

Deno.test("walk() ends at its deadline, also among entries it ignores", async () => {
  const files: Record<string, string> = { ".gitignore": "*.x\n" };
  for (let i = 0; i < 500; i++) files[`f${i}.x`] = "";
  await withTree(files, async (root) => {
    const seen = [];
    for await (const entry of walk(root, new IgnoreRules(root), { deadline: performance.now() })) {
      seen.push(entry.path);
    }
    deepEqual(seen, []);
  });
});

Deno.test("IgnoreRules uses a .gitignore's new patterns once it changed, though compiled ones are kept", async () => {
  await withTree({ ".gitignore": "*.log\n", "a.log": "", "b.tmp": "" }, async (root) => {
    const files = async () => {
      const seen = [];
      for await (const entry of walk(root, new IgnoreRules(root))) {
        if (entry.isFile && entry.name !== ".gitignore") seen.push(entry.name);
      }
      return seen.sort();
    };
    deepEqual(await files(), ["b.tmp"]);
    await Deno.writeTextFile(join(root, ".gitignore"), "*.tmp\n");
    deepEqual(await files(), ["a.log"]);
  });
});
