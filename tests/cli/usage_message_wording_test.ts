/**
 * Usage errors say each thing once and name what was wrong: an unknown option without a second
 * pointer to --help, the extra words after `demo` only, a negative number after an option that
 * `arg` reads as an option with the way to give it, and an empty -C as empty.
 */
import { equal, match, ok, throws } from "node:assert/strict";
import { parseCommandLine } from "../../src/cli/args.ts";
import { UsageError } from "../../src/cli/errors.ts";
import { resolveWorkspace } from "../../src/cli/process_env.ts";

function usageMessage(args: string[]): string {
  try {
    parseCommandLine(args);
  } catch (error) {
    ok(error instanceof UsageError, String(error));
    return error.message;
  }
  throw new Error(`parseCommandLine(${JSON.stringify(args)}) did not throw`);
}

Deno.test("parseCommandLine() says an unknown option once, with one pointer to --help", () => {
  const message = usageMessage(["run", "--frob", "x"]);
  equal(message, 'Unknown option "--frob" (run `tern --help` for usage)');
});

Deno.test("parseCommandLine() quotes only the words after demo", () => {
  match(usageMessage(["demo", "extra"]), /^Unexpected arguments after demo: "extra" \(/);
  match(usageMessage(["--demo", "extra"]), /^Unexpected arguments after demo: "extra" \(/);
});

Deno.test("parseCommandLine() shows how to give a negative number as an option's value", () => {
  match(
    usageMessage(["search", "--limit", "-1", "q"]),
    /^Option "--limit" was given "-1", which is read as an option: give it as --limit=-1/,
  );
  // Given that way, the value itself is judged.
  match(usageMessage(["search", "--limit=-1", "q"]), /Invalid --limit "-1"/);
});

Deno.test("resolveWorkspace() calls an empty -C empty, not a non-directory", () => {
  throws(() => resolveWorkspace(""), /Cannot use workspace "": the path is empty/);
});
