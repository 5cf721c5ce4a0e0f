/**
 * tern's entry point. `--version` answers before anything else is imported; everything else
 * loads the CLI lazily so start-up stays fast.
 */
import { versionLine } from "./src/version.ts";
import { phaseMark } from "./src/core/phase_marks.ts";

phaseMark("main");

if (Deno.args.length === 1 && (Deno.args[0] === "--version" || Deno.args[0] === "-V")) {
  try {
    console.log(versionLine());
  } catch (error) {
    // A closed or full stdout: say so on stderr, no stack trace, and fail.
    console.error(`tern: cannot write the version to stdout: ${(error as Error).message}`);
    Deno.exitCode = 1;
  }
} else {
  const { main } = await import("./src/cli/main.ts");
  Deno.exitCode = await main(Deno.args);
}
