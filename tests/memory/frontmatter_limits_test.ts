import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { discoverSkills } from "../../src/memory/skills.ts";
import { discoverTemplates } from "../../src/memory/templates.ts";
import {
  FrontmatterError,
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
