/**
 * A `.env` saved on Windows (CRLF) reads as dotenv reads it; a carriage return anywhere else
 * (a file of CR line ends, a CR pasted inside a value) is refused, naming the file and line,
 * rather than joining lines into one value or dropping the character without a word.
 */
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../src/config/mod.ts";
import { withFixture } from "./_fixture.ts";

Deno.test("loadConfig() reads a CRLF .env, its last line's CR included, without the CRs", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write("cwd/.env", "TERN_MODEL=gpt-x\r\nTERN_MAX_ROUNDS=5\r");
    const { config } = await loadConfig({ cwd, env: { HOME: home } });
    assert.equal(config.model, "gpt-x");
    assert.equal(config.maxRounds, 5);
  });
});

Deno.test("loadConfig() refuses a carriage return inside a .env line, naming the file and line", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const cases: Array<[string, number]> = [
      // CR line ends only: read as one line, the model would be "gpt-xTERN_MAX_ROUNDS=5".
      ["TERN_MODEL=gpt-x\rTERN_MAX_ROUNDS=5\r", 1],
      ["# models\nTERN_MODEL=gp\rt-x\n", 2],
      ['TERN_MAX_ROUNDS=5\nTERN_MODEL="gpt-x\r\r"\n', 2],
    ];
    for (const [text, line] of cases) {
      const file = write("cwd/.env", text);
      await assert.rejects(loadConfig({ cwd, env: { HOME: home } }), (error: Error) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.equal(error.file, file);
        assert.equal(error.line, line);
        assert.equal(
          error.message,
          `Invalid .env file "${file}": line ${line}: a carriage return (\\r) inside the line; ` +
            "save the file with LF or CRLF line endings",
        );
        return true;
      });
    }
  });
});
