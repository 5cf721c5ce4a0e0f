/**
 * The script a hook runs in (src/sandbox/hooks/wrapper.ts), run by bash as the sandbox runs it:
 * what the hook's environment holds, and that its answer comes when it exits.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { hookScript, unwrap } from "../../src/sandbox/hooks/wrapper.ts";
import { processesWith } from "./_hostile_project.ts";

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

Deno.test("hookScript() takes the answer when the hook exits, killing what it left holding its output", async () => {
  const marker = "TERN_HOOK_test";
  const script = await hookScript(
    "cat >/dev/null; sleep 31.5 & setsid sleep 32.5 & sleep 0.3; echo answer; echo why >&2; exit 2",
    "{}",
    { marker, workspace: "/w" },
  );
  const started = performance.now();
  const run = await new Deno.Command("bash", {
    args: ["-c", script!],
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin" },
    stdout: "piped",
  }).output();
  ok(performance.now() - started < 10_000, "the wrapper waited for the hook's children");
  deepEqual(unwrap(new TextDecoder().decode(run.stdout), marker), {
    stdout: "answer",
    stderr: "why",
    code: 2,
  });
  deepEqual(await processesWith("sleep 3[12]\\.5"), []);
});
