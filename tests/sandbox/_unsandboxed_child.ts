/**
 * A tern stand-in for unsandboxed_escape_test.ts: runs Deno.args[0] through the unsandboxed
 * runner (containment Deno.args[1]: found or pid-namespace), echoing its output, until killed.
 */
import { safeEnv } from "../../src/sandbox/process.ts";
import {
  type Containment,
  createUnsandboxedRunner,
  findContainment,
} from "../../src/sandbox/shell_runner.ts";

const containment: Promise<Containment> = Deno.args[1] === "pid-namespace"
  ? Promise.resolve({ kind: "pid-namespace", unshare: "/usr/bin/unshare" })
  : findContainment();
const run = createUnsandboxedRunner(safeEnv(), { containment });
const out = new TextEncoder();
await run(Deno.args[0], {
  cwd: Deno.cwd(),
  onOutput: (text) => Deno.stdout.writeSync(out.encode(text)),
});
