import assert from "node:assert/strict";
import { parseArgs } from "node:util";
import { parseArgv } from "../../src/cli/_argv.ts";

const OPTIONS = {
  once: { type: "string", short: "p" },
  cwd: { type: "string", short: "C" },
  model: { type: "string", short: "m" },
  "base-url": { type: "string" },
  output: { type: "string", short: "o" },
  "no-sandbox": { type: "boolean" },
  json: { type: "boolean" },
  continue: { type: "boolean", short: "c" },
  resume: { type: "string", short: "r" },
  version: { type: "boolean", short: "V" },
  help: { type: "boolean", short: "h" },
} as const;

const CASES: string[][] = [
  [],
  ["run", "fix", "the", "bug"],
  ["run", "x", "--model", "gpt", "--base-url=http://h/v1", "-o", "json"],
  ["-p", "task", "-C", "/tmp", "-mgpt"],
  ["-ch"],
  ["-cV", "run"],
  ["-cmgpt", "run"],
  ["-cm", "gpt"],
  ["-hC/x"],
  ["--json", "--json", "--model", "a", "--model=b"],
  ["run", "--", "--model", "-x", "-"],
  ["-"],
  ["run", "-", "x"],
  ["--model=", "run"],
  ["--model=-x"],
  ["-m-x"],
  ["--resume="],
  ["--no-sandbox", "run", "x"],
  // Errors: unknown options, missing or ambiguous values, values for booleans.
  ["--nope"],
  ["--nope=1", "--model"],
  ["-z"],
  ["-cz"],
  ["-zc"],
  ["---"],
  ["--=a=b"],
  ["-m"],
  ["run", "--model"],
  ["--model", "-x"],
  ["-m", "--json"],
  ["--model", "--"],
  ["--json=yes"],
  ["--json="],
  ["-c", "--version=1"],
];

function outcome(parse: () => { values: Record<string, unknown>; positionals: string[] }) {
  try {
    const { values, positionals } = parse();
    return { values: { ...values }, positionals };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // node adds advice on positionals after the name: compare the name only.
    const unknown = /^Unknown option ['"]([^'"]+)['"]/.exec(message);
    return { error: unknown ? `unknown ${unknown[1]}` : message };
  }
}

Deno.test("parseArgv() splits argv as node:util parseArgs does, errors included", () => {
  for (const args of CASES) {
    const ours = outcome(() => parseArgv(args, OPTIONS));
    const node = outcome(() =>
      parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true })
    );
    assert.deepStrictEqual(ours, node, JSON.stringify(args));
  }
});

Deno.test("parseArgv() names an unknown option in tern's style", () => {
  assert.throws(() => parseArgv(["--nope"], OPTIONS), /^TypeError: Unknown option "--nope"$/);
  assert.throws(() => parseArgv(["-cz"], OPTIONS), /^TypeError: Unknown option "-z"$/);
});
