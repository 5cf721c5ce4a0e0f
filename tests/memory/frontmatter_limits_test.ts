import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { discoverSkills } from "../../src/memory/skills.ts";
import { discoverTemplates } from "../../src/memory/templates.ts";
import {
  frontmatterBudget,
  FrontmatterError,
  frontmatterParses,
  MAX_FRONTMATTER_DEPTH,
  parseFrontmatter,
} from "../../src/memory/frontmatter.ts";
import { READ_ALL } from "../support/read_all.ts";

/** Six anchors, each a list of ten aliases of the one before: 60 aliases, a billion leaves. */
const ALIAS_BOMB = [
  "a: &a [x,x,x,x,x,x,x,x,x,x]",
  ...["b", "c", "d", "e", "f"].map((name, i) => {
    const previous = "abcde"[i];
    return `${name}: &${name} [${Array(10).fill(`*${previous}`).join(",")}]`;
  }),
  `g: [${Array(10).fill("*f").join(",")}]`,
].join("\n");

async function withTree(body: (t: { home: string; ws: string }) => Promise<void>) {
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-frontmatter-" }));
  const home = join(root, "home");
  const ws = join(root, "ws");
  await Deno.mkdir(home);
  await Deno.mkdir(ws);
  try {
    await body({ home, ws });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

function writeIn(dir: string, path: string, text: string): string {
  const file = join(dir, path);
  Deno.mkdirSync(join(file, ".."), { recursive: true });
  Deno.writeTextFileSync(file, text);
  return file;
}

Deno.test("discoverSkills() skips a skill whose frontmatter uses aliases 60 times, naming it, and keeps the rest", async () => {
  await withTree(async ({ home, ws }) => {
    const bombs = [".tern", ".claude"].map((folder) =>
      writeIn(
        ws,
        `${folder}/skills/s${folder}/SKILL.md`,
        `---\nname: bomb\ndescription: x\n${ALIAS_BOMB}\n---\nbody\n`,
      )
    );
    writeIn(ws, ".tern/skills/good/SKILL.md", "---\nname: good\ndescription: fine\n---\nbody\n");
    const index = await discoverSkills(ws, home, READ_ALL);
    deepEqual(index.skills.map((skill) => skill.name), ["good"]);
    for (const bomb of bombs) {
      const line = index.diagnostics.find((text) => text.includes(`"${bomb}"`));
      ok(line, `no diagnostic for ${bomb}: ${index.diagnostics.join("\n")}`);
      match(line, /^Cannot read the frontmatter of ".*" at line 2: .*alias/i);
    }
  });
});

Deno.test("discoverTemplates() skips a template whose frontmatter contains itself or nests too deep, naming it", async () => {
  await withTree(async ({ home, ws }) => {
    const deep = `${"[".repeat(MAX_FRONTMATTER_DEPTH)}x${"]".repeat(MAX_FRONTMATTER_DEPTH)}`;
    const files = [
      writeIn(ws, ".tern/prompts/self.md", "---\ndescription: d\nargs: &x [*x]\n---\nbody\n"),
      writeIn(ws, ".tern/prompts/mapself.md", "---\ndescription: d\nargs: [&y {a: *y}]\n---\nb\n"),
      writeIn(ws, ".tern/prompts/deep.md", `---\ndescription: d\nargs: ${deep}\n---\nbody\n`),
      writeIn(ws, ".tern/prompts/deeper.md", `---\nargs: ${"[".repeat(5_000)}\n---\nbody\n`),
      writeIn(ws, ".tern/prompts/bomb.md", `---\ndescription: d\n${ALIAS_BOMB}\n---\nbody\n`),
    ];
    writeIn(ws, ".tern/prompts/good.md", "---\ndescription: fine\nargs: [file]\n---\n{{file}}\n");
    const found = await discoverTemplates(ws, home, READ_ALL);
    deepEqual(found.templates.map((template) => template.name), ["good"]);
    for (const file of files) {
      const line = found.diagnostics.find((text) => text.includes(`"${file}"`));
      ok(line, `no diagnostic for ${file}: ${found.diagnostics.join("\n")}`);
      match(line, /^Cannot read the frontmatter of ".*" at line \d+: /);
    }
  });
});

Deno.test("parseFrontmatter() turns whatever the yaml package throws into a FrontmatterError for the file", async () => {
  const cases = [
    ALIAS_BOMB,
    "args: &x [*x]",
    `a: ${"[".repeat(5_000)}${"]".repeat(5_000)}`,
    Array.from({ length: 3_000 }, (_, i) => `${" ".repeat(i)}k:`).join("\n"),
  ];
  for (const block of cases) {
    await rejects(parseFrontmatter(`---\n${block}\n---\nbody\n`, "/w/SKILL.md"), (error) => {
      ok(error instanceof FrontmatterError, String(error));
      equal(error.file, "/w/SKILL.md");
      return true;
    });
  }
  const nested = `a: ${"[".repeat(MAX_FRONTMATTER_DEPTH - 1)}${
    "]".repeat(MAX_FRONTMATTER_DEPTH - 1)
  }`;
  ok((await parseFrontmatter(`---\n${nested}\n---\nbody\n`, "/w/SKILL.md")).data.a);
});

Deno.test("parseFrontmatter() reads 16 KB header lines built to make a pattern backtrack, without stalling", async () => {
  // Blanks then a character a pattern's `.` does not take: a lazy value pattern between runs of
  // blanks backtracked cubically on these (15 minutes for one header). Parsed in a worker so a
  // stall fails the test at its deadline instead of hanging the run.
  const blanks = " ".repeat(16_000 - 40);
  const headers = [
    `---\nname:${blanks}\u2028\ndescription: x\n---\nbody\n`,
    `---\ndescription:${blanks}\rx\n---\nbody\n`,
    `---\nname: a${blanks}b${blanks.slice(0, 100)}\u2029\n---\nbody\n`,
  ];
  const source = `
    import { parseFrontmatter } from ${
    JSON.stringify(new URL("../../src/memory/frontmatter.ts", import.meta.url).href)
  };
    self.onmessage = async (event) => {
      const out = [];
      for (const text of event.data) {
        try {
          out.push(Object.keys((await parseFrontmatter(text, "SKILL.md")).data).length);
        } catch (error) {
          out.push(error.name);
        }
      }
      self.postMessage(out);
    };`;
  const worker = new Worker(URL.createObjectURL(new Blob([source], { type: "text/javascript" })), {
    type: "module",
  });
  try {
    const answer = new Promise<unknown[]>((resolve) => {
      worker.onmessage = (event) => resolve(event.data);
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<"stalled">((resolve) => {
      timer = setTimeout(() => resolve("stalled"), 60_000);
    });
    worker.postMessage(headers);
    const result = await Promise.race([answer, deadline]);
    clearTimeout(timer);
    ok(result !== "stalled", "parsing the headers stalled for a minute");
    equal((result as unknown[]).length, 3);
  } finally {
    worker.terminate();
  }
});

Deno.test("parseFrontmatter() reads a plain header with long runs of blanks around a value itself", async () => {
  const before = frontmatterParses.count;
  const pad = " \t".repeat(4_000);
  const { data } = await parseFrontmatter(`---\nname:${pad}tidy${pad}\n---\nbody\n`, "SKILL.md");
  deepEqual(data, { name: "tidy" });
  equal(frontmatterParses.count, before, "read without the yaml package");
  // A quoted value is YAML's to read.
  deepEqual((await parseFrontmatter(`---\nname: 'ti dy'\n---\n`, "SKILL.md")).data, {
    name: "ti dy",
  });
  equal(frontmatterParses.count, before + 1);
});

Deno.test("parseFrontmatter() refuses a header that needs the yaml package once its time is spent", async () => {
  const saved = { ...frontmatterBudget.spent };
  try {
    frontmatterBudget.spent.repository = frontmatterBudget.ms;
    // A plain block is still read; a block in flow style is refused, naming why.
    deepEqual((await parseFrontmatter("---\nname: a\n---\n", "a.md")).data, { name: "a" });
    await rejects(
      parseFrontmatter(`---\nname: a\ntags: {x: [1, 2]}\n---\n`, "b.md"),
      (error: Error) =>
        error instanceof FrontmatterError &&
        /spent its 2 s for YAML headers of the repository's files/.test(error.message),
    );
    // The repository's headers never spend the person's time: their own are still read.
    deepEqual(
      (await parseFrontmatter(`---\nname: c\ntags: {x: [1, 2]}\n---\n`, "c.md", "person")).data,
      { name: "c", tags: { x: [1, 2] } },
    );
    frontmatterBudget.spent.person = frontmatterBudget.ms;
    await rejects(
      parseFrontmatter(`---\nname: d\ntags: {y: [1]}\n---\n`, "d.md", "person"),
      /spent its 2 s for YAML headers of your own files/,
    );
  } finally {
    Object.assign(frontmatterBudget.spent, saved);
  }
});

Deno.test("a repository whose skill headers spend the YAML time leaves the person's own skills read", async () => {
  const saved = { ...frontmatterBudget.spent };
  try {
    await withTree(async ({ home, ws }) => {
      const header = (name: string) =>
        `---\nname: ${name}\ndescription: d\ntags: {x: [1, 2]}\n---\nb\n`;
      writeIn(ws, ".tern/skills/theirs/SKILL.md", header("theirs"));
      writeIn(home, "skills/mine/SKILL.md", header("mine"));
      frontmatterBudget.spent.repository = frontmatterBudget.ms;
      const found = await discoverSkills(ws, home, READ_ALL);
      deepEqual(found.skills.map((s) => s.name), ["mine"]);
      ok(found.diagnostics.some((line) => /theirs.*the repository's files/s.test(line)));
    });
  } finally {
    Object.assign(frontmatterBudget.spent, saved);
  }
});
