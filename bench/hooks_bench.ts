/**
 * What a lifecycle hook costs per tool call: a PreToolUse hook that only reads its input
 * (`cat >/dev/null`), run in the sandbox's shell, against the same shell running `true`.
 * Run: deno run --no-prompt --allow-read --allow-write --allow-env --allow-run --allow-sys
 * bench/hooks_bench.ts
 */
import { join } from "node:path";
import { HookRunner } from "../src/sandbox/hooks/run.ts";
import { createSandbox } from "../src/sandbox/runtime.ts";

const RUNS = 20;
const root = await Deno.realPath(
  await Deno.makeTempDir({ dir: "/var/tmp", prefix: "hooks-bench-" }),
);
const ws = join(root, "ws");
const ternHome = join(root, "tern-home");
await Deno.mkdir(ws);
await Deno.mkdir(ternHome);
const runtime = await createSandbox({
  workspace: ws,
  profile: ":workspace",
  noSandbox: false,
  ternHome,
  env: { PATH: "/usr/bin:/bin", HOME: root },
  home: root,
  handlerUrl: new URL("../src/tools/worker_handler.ts", import.meta.url),
  runId: "bench",
});
const hooks = new HookRunner({
  hooks: [{ event: "PreToolUse", matcher: "Bash", command: "cat >/dev/null", timeoutS: 60 }],
  shell: () => ({ run: runtime.shell, confined: runtime.shellKind === "bwrap" }),
  workspace: ws,
  sessionId: "bench",
  transcriptPath: "",
  profile: runtime.profile.name,
  mode: "bypass",
});
const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
async function time(fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  await fn();
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return median(times);
}
try {
  const shell = await time(() => runtime.shell("true", { cwd: ws }));
  const hook = await time(() =>
    hooks.fire("PreToolUse", { tool_name: "Bash", tool_input: { command: "ls" } }, {
      toolName: "bash",
    })
  );
  const none = await time(() => Promise.resolve(hooks.has("PreToolUse", "read")));
  console.log(`shell kind: ${runtime.shellKind}; median of ${RUNS}`);
  console.log(`sandboxed "true": ${shell.toFixed(1)} ms`);
  console.log(`one PreToolUse hook (cat >/dev/null): ${hook.toFixed(1)} ms`);
  console.log(`no matching hook (the check): ${(none * 1000).toFixed(1)} µs`);
} finally {
  await runtime.close();
  await Deno.remove(root, { recursive: true });
}
