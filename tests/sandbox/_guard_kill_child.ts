/**
 * A sandbox over the workspace argv[1] (in argv[0], tern's home there) that starts a background
 * process and a command, prints "ready" and waits to be killed. Used by guard_marks_test.ts.
 */
import { createSandbox } from "../../src/sandbox/runtime.ts";
import { sandboxOptionsFor } from "./_bwrap_helpers.ts";

const [root, ws] = Deno.args;
const sandbox = await createSandbox(sandboxOptionsFor(root, ws, "guard-kill"));
await sandbox.processes.control(false).start("sleep 300", { cwd: ws });
await sandbox.shell("true", { cwd: ws, timeoutMs: 30_000 });
console.log("ready");
await new Promise(() => {});
