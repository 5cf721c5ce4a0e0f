/**
 * A repository's prompt template whose body repeats an argument tens of thousands of times: the
 * person's argument is not multiplied into a message of hundreds of millions of characters (or a
 * crash), and `tern run` says why, with the usage error's exit code.
 */
import { equal, ok, throws } from "node:assert/strict";
import { join } from "node:path";
import {
  MAX_TEMPLATE_REPEAT_CHARS,
  type PromptTemplate,
  renderTemplate,
  TemplateError,
} from "../../src/memory/templates.ts";
import { runTern } from "../support/tern_process.ts";

/** 65,536 `$1`: the most a 128 KB template body holds. */
const REPEATING = "$1".repeat(65_536);

function template(body: string): PromptTemplate {
  return {
    name: "review",
    description: "d",
    args: [],
    body,
    path: "/p/review.md",
    level: "project",
  };
}

Deno.test("renderTemplate() refuses a body that repeats the arguments past MAX_TEMPLATE_REPEAT_CHARS", () => {
  throws(
    () => renderTemplate(template(REPEATING), "a".repeat(20_000)),
    (error: unknown) =>
      error instanceof TemplateError && error.message.includes("/review") &&
      error.message.includes("repeat"),
  );
  // A default from the frontmatter counts too: nothing typed, 20,000 copies of 100 characters.
  const defaults = {
    ...template("{{f}}".repeat(20_000)),
    args: [{ name: "f", default: "d".repeat(100) }],
  };
  throws(() => renderTemplate(defaults, ""), /repeat the arguments/);
  // What fits is rendered: a long argument used once, and a short one used often.
  const long = "b".repeat(3 * MAX_TEMPLATE_REPEAT_CHARS);
  equal(renderTemplate(template("Review: $ARGUMENTS"), long).length, long.length + 8);
  equal(renderTemplate(template(REPEATING), "ab").length, 2 * 65_536);
});

Deno.test("tern run refuses a template that repeats the argument, with a clear error", async () => {
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-template-repeat-" }));
  try {
    const ws = join(root, "ws");
    const home = join(root, "home");
    await Deno.mkdir(join(ws, ".tern", "prompts"), { recursive: true });
    await Deno.mkdir(home);
    await Deno.writeTextFile(
      join(ws, ".tern", "prompts", "review.md"),
      `---\ndescription: Review\n---\n${"$1".repeat(60_000)}`,
    );
    const run = await runTern(
      ["run", "--base-url", "http://127.0.0.1:9", "-m", "x", `/review ${"a".repeat(9_000)}`],
      { cwd: ws, env: { TERN_HOME: home, HOME: home } },
    );
    equal(run.code, 2, run.stderr);
    ok(run.stderr.includes("Cannot render /review"), run.stderr);
    ok(!run.stderr.includes("internal error"), run.stderr);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
