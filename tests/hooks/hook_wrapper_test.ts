/**
 * The script a hook runs in (src/sandbox/hooks/wrapper.ts), run by bash as the sandbox runs it:
 * what the hook's environment holds.
 */
import { equal } from "node:assert/strict";
import { hookScript, unwrap } from "../../src/sandbox/hooks/wrapper.ts";

Deno.test("hookScript() runs the hook with Python's bytecode writing off and the project named", async () => {
  // Bytecode beside a hook's scripts would lapse its trust (a `__pycache__` is never pinned).
  const marker = "TERN_HOOK_test";
  const script = await hookScript(
    'printf "%s|%s" "$PYTHONDONTWRITEBYTECODE" "$TERN_PROJECT_DIR"',
    "{}",
    { marker, workspace: "/w s" },
  );
  const run = await new Deno.Command("bash", {
    args: ["-c", script!],
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin" },
    stdout: "piped",
  }).output();
  const result = unwrap(new TextDecoder().decode(run.stdout), marker);
  equal(result?.stdout, "1|/w s");
  equal(result?.code, 0);
});
