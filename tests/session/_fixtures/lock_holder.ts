/**
 * A second tern process for the lock tests: `open <file>` tries to open the session and exits
 * with the error's exit code (printing the message to stderr), or 0 after closing it;
 * `hold <file>` opens it, prints "locked" and keeps it until stdin closes or it is killed.
 */
import { TernError } from "../../../src/core/errors.ts";
import { exitCodeForError } from "../../../src/cli/exit_codes.ts";
import { SessionWriter } from "../../../src/session/store.ts";

const [mode, path] = Deno.args;
try {
  const { writer } = await SessionWriter.open(path);
  if (mode === "hold") {
    console.log("locked");
    for await (const _ of Deno.stdin.readable) {
      // Hold the lock until stdin closes.
    }
  }
  writer.close();
  console.log("opened");
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  Deno.exit(error instanceof TernError ? exitCodeForError(error) : 1);
}
