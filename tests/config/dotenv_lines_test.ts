import assert from "node:assert/strict";
import { parseEnv } from "node:util";
import { ignoredDotenvLines } from "../../src/config/_dotenv_lines.ts";
import { loadConfig } from "../../src/config/mod.ts";
import { withFixture } from "./_fixture.ts";

const KEY = "sk-abc123def456ghi789";

Deno.test("ignoredDotenvLines() names the lines parseEnv() passes over, not comments or quoted lines", () => {
  const text = [
    "# a comment",
    `OPENAI_API_KEY ${KEY}`,
    "",
    "export TERN_MODEL = m",
    'NOTE="two',
    "lines, no = here",
    'end"',
    "=no-name",
    "  # indented comment",
    "export",
    "C='no closing quote",
    "D=1 # trailing comment",
  ].join("\n");
  assert.deepEqual(ignoredDotenvLines(text), [2, 8, 10]);
  // The lines said to be ignored are exactly those that set nothing.
  assert.deepEqual(Object.keys(parseEnv(text)), ["TERN_MODEL", "NOTE", "C", "D"]);
  assert.deepEqual(ignoredDotenvLines("A=1\r\nB 2\r\n"), [2]);
  assert.deepEqual(ignoredDotenvLines(""), []);
});

Deno.test("loadConfig() warns once of .env lines that are not NAME=value, by number, never their text", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const file = write("cwd/.env", `# keys\nOPENAI_API_KEY ${KEY}\nTERN_MODEL=m\n`);
    const warnings: string[] = [];
    const { config } = await loadConfig({
      cwd,
      env: { HOME: home },
      warn: (text) => warnings.push(text),
    });
    assert.equal(config.model, "m");
    assert.deepEqual(warnings, [`Line 2 of .env file "${file}" is not NAME=value: ignored`]);

    write("cwd/.env", `A ${KEY}\nB\n=c\nD=1\n`);
    warnings.length = 0;
    await loadConfig({ cwd, env: { HOME: home }, warn: (text) => warnings.push(text) });
    assert.deepEqual(warnings, [
      `Lines 1, 2 and 3 of .env file "${file}" are not NAME=value: ignored`,
    ]);
    assert.ok(!warnings.join("").includes(KEY.slice(3)));
  });
});
