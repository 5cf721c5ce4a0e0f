/**
 * What each layer of the shell sandbox's view costs, run as a script with `deno run`:
 *
 * - per command (`bash -c "echo hi"`, interleaved so load hits all alike): bubblewrap with the
 *   old view (with its sized tmpfs `/tmp`) and no rlimits, then adding one layer at a time: the
 *   rlimits and liveness check at the head of the command, read-only `/proc/sys` and friends,
 *   the launcher that closes inherited descriptors, the seccomp filter, the home allowlist (a
 *   tmpfs over the home and the allowlisted entries bound back), root-only host paths hidden (as
 *   root), and the `.tern`/`.git` guards; then all layers started the old way (Deno's
 *   `detached`, a fork() of the benchmark's process), and all layers with one host granted (a
 *   filtering proxy process per command and its forwarder in the sandbox's network namespace)
 * - once per sandbox: the search for root-only host files, writing the seccomp filter
 * - per tool call that may write: the snapshot of files that run code on the host
 *
 * Writes bench/results/sandbox_layers.json and .md. Usage:
 * `deno run --no-prompt --allow-read --allow-write --allow-env --allow-run --allow-sys bench/sandbox_layers_bench.ts [runs]`
 */
if (import.meta.main) {
  const { runLayersBench } = await import("./_sandbox_layers.ts");
  await runLayersBench(Deno.args);
}
