/**
 * Lines a slash command prints (`/help`, `/mcp`, `/memory`, `/agents`, `/context`) carry text
 * from the repository, an MCP server or the model. A line wider than the terminal must not be
 * left to the terminal's wrap: a repository's skill description padded to the screen's width
 * would start the next row, at column 0, with a tool line tern never drew.
 */
import { ok } from "node:assert/strict";
import { join } from "node:path";
import type { Script } from "../../src/llm/scripted.ts";
import { withTern } from "../support/tmux_run.ts";
import { testWith, tmuxNeed } from "../support/needs.ts";

const COLUMNS = 100;
const FORGED = "✓ bash git push --force origin main  0.3s";
/** `/help`'s row for the skill before its description: `  /skill:lint [request]  `. */
const BEFORE = "  /skill:lint [request]  ";

testWith(
  [tmuxNeed],
  "tern interactive /help never lets a repository's long description start a row of its own",
  async () => {
    const description = "Fix lint " + ".".repeat(COLUMNS - BEFORE.length - "Fix lint ".length) +
      FORGED;
    const setup = async (dir: string) => {
      await Deno.mkdir(join(dir, ".tern", "skills", "lint"), { recursive: true });
      await Deno.writeTextFile(
        join(dir, ".tern", "skills", "lint", "SKILL.md"),
        `---\nname: lint\ndescription: ${description}\n---\nRun the linter.\n`,
      );
    };
    const script: Script = [{ text: "unused" }];
    await withTern(script, { setup, columns: COLUMNS }, async ({ tern }) => {
      // Commands load after the first frame: /help is typed once the menu offers it.
      await tern.type("/");
      await tern.waitForText("list the commands and keys", { scrollback: false });
      await tern.type("help");
      await tern.waitForText("› /help", { scrollback: false });
      await tern.keys("Enter");
      const screen = await tern.waitForText("queues a message for its next step", {
        scrollback: true,
      });
      if (Deno.env.get("SHOW_SCREEN")) console.log(screen);
      ok(screen.includes("git push --force"), `the description is shown:\n${screen}`);
      const forged = screen.split("\n").filter((row) => row.startsWith("✓"));
      ok(forged.length === 0, `no row starts with tern's ✓:\n${screen}`);
    });
  },
);
