/**
 * Sandbox overhead benchmarks (issue 3, part 9), run as a script with `deno run`:
 *
 * - a `read` of a 1 KB file: in-process (`tool.run`), through a warm process worker, through a
 *   warm Worker-backend worker (in a child `deno run --unstable-worker-options`, which that
 *   backend needs), and through a fresh worker per call (a cold `deno run`)
 * - worker start-up (`WorkerHost.start()`), with the DENO_DIR caches and with an empty
 *   DENO_DIR, next to Deno's own floor (an empty script; the worker's flags with an empty entry)
 * - `bash -c "echo hi"` through the bubblewrap runner (a `:workspace`-like plan) and without
 *   any sandbox
 *
 * The worker gets the `:workspace` profile's grants (read and write the workspace and a private
 * tmp). Target: warm-worker median ≤ 3 ms (printed as PASS or MISS). Writes
 * bench/results/sandbox.json and bench/results/sandbox.md. Usage: `deno task bench`, or
 * `deno run --no-prompt --allow-read --allow-write --allow-env --allow-run --allow-sys bench/sandbox_bench.ts`
 */

// `deno bench bench/` loads this file too (its name ends in _bench.ts) without env or run
// permission, which the tools' modules need as they load: load the benchmark only as a script.
if (import.meta.main) {
  const { runSandboxBench } = await import("./_sandbox_run.ts");
  await runSandboxBench(Deno.args);
}
