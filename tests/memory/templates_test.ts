import { deepEqual, equal, match, ok, rejects, throws } from "node:assert/strict";
import { join } from "node:path";
import { exitCodeForError } from "../../src/cli/exit_codes.ts";
import {
  discoverTemplates,
  expandTemplateCommand,
  type PromptTemplate,
  renderTemplate,
  splitArgs,
  TemplateError,
} from "../../src/memory/templates.ts";
import { READ_ALL } from "../support/read_all.ts";
import { discoverSkills } from "../../src/memory/skills.ts";

function template(body: string, args: PromptTemplate["args"] = []): PromptTemplate {
  return { name: "t", description: "d", args, body, path: "/p/t.md", level: "project" };
}

async function withTree(body: (t: { root: string; home: string; ws: string }) => Promise<void>) {
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-prompts-" }));
  const home = join(root, "home");
  const ws = join(root, "ws");
  await Deno.mkdir(join(home, "prompts"), { recursive: true });
  await Deno.mkdir(join(ws, ".tern", "prompts"), { recursive: true });
  try {
    await body({ root, home, ws });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("renderTemplate() fills $1, $ARGUMENTS and {{name}}, with defaults and name=value", () => {
  const args = [{ name: "file" }, { name: "focus", default: "correctness" }];
  const review = template("Review {{file}} for {{focus}}.", args);
  equal(renderTemplate(review, "src/a.ts"), "Review src/a.ts for correctness.");
  equal(renderTemplate(review, "src/a.ts speed"), "Review src/a.ts for speed.");
  equal(
    renderTemplate(review, 'focus="error handling" file=b.ts'),
    "Review b.ts for error handling.",
  );
  equal(
    renderTemplate(template("First $1, all: $ARGUMENTS"), ' "a b" c '),
    'First a b, all: "a b" c',
  );
  deepEqual(splitArgs(`one "two words" 'three'`), ["one", "two words", "three"]);
});

Deno.test("renderTemplate() refuses a missing, unknown or extra argument with a usage error", () => {
  const review = template("Review {{file}} for {{focus}}.", [
    { name: "file" },
    { name: "focus", default: "correctness" },
  ]);
  const usage = (error: unknown) => error instanceof TemplateError && exitCodeForError(error) === 2;
  throws(
    () => renderTemplate(review, ""),
    (e) =>
      usage(e) &&
      /Missing argument "file" for \/t: it takes <file> \[focus=correctness\]/.test(String(e)),
  );
  throws(() => renderTemplate(review, "a.ts level=3"), /Unknown argument "level" for \/t/);
  throws(
    () => renderTemplate(review, "a.ts speed extra"),
    /Too many arguments for \/t: "extra" is left over/,
  );
  throws(() => renderTemplate(template("Fix $2"), "one"), /Missing argument \$2 for \/t: 1 given/);
  throws(
    () => renderTemplate(template("Use {{nope}}"), ""),
    /Unknown argument "\{\{nope\}\}" in \/t/,
  );
});

Deno.test("renderTemplate() refuses words beyond its args and its highest $N, unless it takes $ARGUMENTS", () => {
  const review = template("Review $1", [{ name: "file" }]);
  equal(renderTemplate(review, "a"), "Review a");
  throws(
    () => renderTemplate(review, "a b"),
    /Too many arguments for \/t: "b" is left over; it takes 1 \(<file>\), 2 given/,
  );
  throws(
    () => renderTemplate(template("Compare $1 with $2"), "x y z"),
    /Too many arguments for \/t: "z" is left over; it takes 2 \(\$1 \$2\), 3 given/,
  );
  // A word given by name frees no position for an extra one.
  const two = template("{{file}} {{focus}}", [{ name: "file" }, { name: "focus" }]);
  throws(
    () => renderTemplate(two, "focus=speed a b"),
    /"b" is left over; it takes 2 \(<file> <focus>\), 3 given/,
  );
  throws(() => renderTemplate(template("Fixed text"), "x"), /"x" is left over; it takes none/);
  equal(renderTemplate(template("First $1, all: $ARGUMENTS"), "a b c"), "First a, all: a b c");
});

Deno.test("discoverTemplates() reads both folders, the person's over the project's, and describes each", async () => {
  await withTree(async ({ home, ws }) => {
    await Deno.writeTextFile(
      join(home, "prompts", "review.md"),
      "---\ndescription: USER review\nargs:\n  - name: file\n  - name: focus\n    default: bugs\n---\nReview {{file}} for {{focus}}",
    );
    await Deno.writeTextFile(join(home, "prompts", "fix.md"), "Fix $ARGUMENTS now\nmore");
    await Deno.writeTextFile(
      join(ws, ".tern", "prompts", "review.md"),
      "---\ndescription: PROJECT review\n---\nproject body $ARGUMENTS",
    );
    await Deno.writeTextFile(join(ws, ".tern", "prompts", "bad.md"), "---\nargs: [x\n---\n");
    const index = await discoverTemplates(ws, home, READ_ALL);
    deepEqual(index.templates.map((t) => [t.name, t.description, t.level]), [
      ["fix", "Fix $ARGUMENTS now", "user"],
      ["review", "USER review", "user"],
    ]);
    match(index.diagnostics.join("\n"), /Cannot read the frontmatter of ".*bad\.md" at line \d/);
    match(
      index.diagnostics.join("\n"),
      /"\/review" in ".*ws\/\.tern\/prompts\/review\.md" is not used: ".*home\/prompts\/review\.md" takes precedence/,
    );
    equal(expandTemplateCommand("/review a.ts", index.templates), "Review a.ts for bugs");
    equal(expandTemplateCommand("fix the bug", index.templates), undefined);
    equal(expandTemplateCommand("/usr/bin/env is broken", index.templates), undefined);
    throws(
      () => expandTemplateCommand("/nope x", index.templates),
      /Unknown prompt template "\/nope" \(templates: \/fix, \/review\)/,
    );
  });
});

Deno.test("discoverTemplates() refuses a template that is a symlink out of the workspace", async () => {
  await withTree(async ({ root, home, ws }) => {
    await Deno.writeTextFile(join(root, "secret.md"), "SECRET");
    Deno.symlinkSync(join(root, "secret.md"), join(ws, ".tern", "prompts", "leak.md"));
    const index = await discoverTemplates(ws, home, READ_ALL);
    deepEqual(index.templates, []);
    match(index.diagnostics[0], /Skipping prompt template ".*leak\.md": it leads out/);
  });
  await rejects(Promise.reject(new TemplateError("x")), TemplateError);
});

Deno.test("discoverTemplates() gives a description on one line without control characters", async () => {
  await withTree(async ({ home, ws }) => {
    await Deno.writeTextFile(
      join(ws, ".tern", "prompts", "evil.md"),
      "\x1b]0;owned\x07Title\x1b[2J line\nsecond",
    );
    const [evil] = (await discoverTemplates(ws, home, READ_ALL)).templates;
    equal(evil.description, "]0;owned Title [2J line");
  });
});

Deno.test("a prompts or skills folder of thousands of entries is not listed whole", async () => {
  const ws = await Deno.makeTempDir({ prefix: "tern-many-" });
  const home = join(ws, "home");
  try {
    // 12,000 files: past MAX_FOLDER_BYTES on ext4 (about 28 bytes an entry), so neither folder
    // is read at all; a repository's 300,000 cost most of a second and hundreds of MB a turn.
    const prompts = join(ws, ".tern", "prompts");
    const skills = join(ws, ".agents", "skills");
    await Deno.mkdir(prompts, { recursive: true });
    await Deno.mkdir(skills, { recursive: true });
    for (let i = 0; i < 12_000; i++) {
      Deno.writeTextFileSync(join(prompts, `p${i}.md`), "");
      Deno.mkdirSync(join(skills, `s${i}`));
    }
    const templates = await discoverTemplates(ws, home, READ_ALL);
    match(templates.diagnostics.join("\n"), /are not all read: it holds more than 2000 entries/);
    ok(templates.templates.length <= 200);
    const found = await discoverSkills(ws, home, READ_ALL);
    match(found.diagnostics.join("\n"), /were not all searched/);
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("discoverTemplates() in the home folder reads tern's home as the person's templates only", async () => {
  const home = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-prompts-home-" }));
  const ternHome = join(home, ".tern");
  try {
    Deno.mkdirSync(join(ternHome, "prompts"), { recursive: true });
    Deno.writeTextFileSync(join(ternHome, "prompts", "fix.md"), "---\ndescription: Mine\n---\nB\n");
    const mine = await discoverTemplates(home, ternHome, READ_ALL);
    deepEqual(mine.templates.map((t) => [t.name, t.level]), [["fix", "user"]]);
    deepEqual(mine.diagnostics, []);
    // Nor does a server a project's files chose get them as the project's.
    const theirs = await discoverTemplates(home, ternHome, READ_ALL, { personal: false });
    deepEqual(theirs.templates, []);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
