/**
 * Measurements for bench/sandbox_bench.ts: timing statistics, the tool worker (warm, cold and
 * start-up) on either backend, the in-process read tool, Deno's own start-up floor and shell
 * commands through a runner.
 */
import type { Observation } from "../src/core/observation.ts";
import { workerRunArgs } from "../src/sandbox/worker/flags.ts";
import { type WorkerBackend, WorkerHost, type WorkerWrap } from "../src/sandbox/worker/host.ts";
import type { Grants, ShellRunner } from "../src/sandbox/types.ts";
import { createBuiltinTools } from "../src/tools/builtin.ts";

/** The real handler module of the tool worker. */
export const HANDLER_URL = new URL("../src/tools/worker_handler.ts", import.meta.url);

/** The call every read measurement makes: a ~1 KB file in the workspace. */
export const READ_ARGS = { path: "notes.txt" };

export { type Stats, stats } from "./_stats.ts";

/** Times `runs` calls of `fn` (one at a time) after `warmup` untimed ones. */
export async function timeCalls(
  runs: number,
  warmup: number,
  fn: () => Promise<void>,
): Promise<number[]> {
  return (await timeInterleaved(runs, warmup, [fn]))[0];
}

/**
 * Times `runs` rounds of calling each of `fns` in turn (after `warmup` untimed rounds), so a
 * change in the machine's load hits all of them alike. One list of times per function.
 */
export async function timeInterleaved(
  runs: number,
  warmup: number,
  fns: readonly (() => Promise<void>)[],
): Promise<number[][]> {
  const times = fns.map((): number[] => []);
  for (let round = 0; round < warmup + runs; round++) {
    for (const [i, fn] of fns.entries()) {
      const start = performance.now();
      await fn();
      if (round >= warmup) times[i].push(performance.now() - start);
    }
  }
  return times;
}

/** Throws unless `observation` is a successful read of the bench file. */
export function expectRead(observation: Observation): void {
  if (observation.status !== "SUCCEEDED" || observation.output.length < 1000) {
    throw new Error(`Cannot benchmark the read: it gave ${JSON.stringify(observation)}`);
  }
}

/** Where the worker runs: the workspace, its grants, and the backend. */
export interface WorkerSetup {
  workspace: string;
  grants: Grants;
  backend: WorkerBackend;
  /** The worker process's environment source (e.g. with another DENO_DIR). */
  env?: Record<string, string>;
  /** Wraps the worker's command line (bubblewrap, as runtime.ts does). */
  wrap?: WorkerWrap;
}

function newHost(setup: WorkerSetup): WorkerHost {
  const { workspace, grants, backend, env, wrap } = setup;
  return new WorkerHost({ grants, handlerUrl: HANDLER_URL, workspace, backend, env, wrap });
}

/** Per-call times of a read through one warm worker (started before timing). */
export async function timeWarmReads(
  setup: WorkerSetup,
  runs: number,
  warmup: number,
): Promise<number[]> {
  const host = newHost(setup);
  try {
    await host.start();
    return await timeCalls(
      runs,
      warmup,
      async () => expectRead(await host.call("read", READ_ARGS)),
    );
  } finally {
    await host.close();
  }
}

/**
 * Times of `WorkerHost.start()` for each of `setups`, taking turns (so a busy machine weighs
 * on each alike), `runs` times each; each host is closed before the next starts.
 */
export async function timeStartsInterleaved(
  setups: readonly WorkerSetup[],
  runs: number,
): Promise<number[][]> {
  const times = setups.map((): number[] => []);
  for (let round = 0; round < runs; round++) {
    for (const [i, setup] of setups.entries()) times[i].push(...await timeStarts(setup, 1));
  }
  return times;
}

/** Times of `WorkerHost.start()` for `runs` fresh hosts (each closed before the next). */
export async function timeStarts(setup: WorkerSetup, runs: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const host = newHost(setup);
    try {
      const start = performance.now();
      await host.start();
      times.push(performance.now() - start);
    } finally {
      await host.close();
    }
  }
  return times;
}

/**
 * Times of a read through a fresh worker each: from creating the host to the result (the
 * worker's shutdown afterwards is not counted).
 */
export async function timeColdReads(setup: WorkerSetup, runs: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    const host = newHost(setup);
    try {
      expectRead(await host.call("read", READ_ARGS));
      times.push(performance.now() - start);
    } finally {
      await host.close();
    }
  }
  return times;
}

/** Per-call times of the read tool's `run` in this process. */
export async function timeInProcessReads(
  workspace: string,
  runs: number,
  warmup: number,
): Promise<number[]> {
  const read = createBuiltinTools().find((tool) => tool.name === "read");
  if (read === undefined) throw new Error('Cannot benchmark the read: no "read" tool');
  const signal = new AbortController().signal;
  return await timeCalls(runs, warmup, async () => {
    expectRead(await read.run(READ_ARGS, { workspace, signal }));
  });
}

/** A function that runs `deno <args>` in `cwd` to its end; it throws when Deno fails. */
export function denoRun(args: string[], cwd: string): () => Promise<void> {
  return async () => {
    const out = await new Deno.Command(Deno.execPath(), {
      args,
      cwd,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!out.success) {
      const detail = new TextDecoder().decode(out.stderr).trim();
      throw new Error(`Cannot benchmark "deno ${args[0]}": it failed: ${detail}`);
    }
  };
}

/**
 * The worker's exact `deno run` arguments with an empty entry module: Deno starting with the
 * same flags and config but loading none of tern's code.
 */
export function emptyEntryArgs(grants: Grants): string[] {
  const args = workerRunArgs({ grants, handlerUrl: HANDLER_URL });
  return [...args.slice(0, -1), "data:text/javascript,"];
}

/** A function that runs `echo hi` through `runner` in `cwd`; it throws unless that printed "hi". */
export function shellEcho(runner: ShellRunner, cwd: string): () => Promise<void> {
  return async () => {
    const result = await runner("echo hi", { cwd, timeoutMs: 10_000 });
    if (result.code !== 0 || result.output.trim() !== "hi") {
      throw new Error(`Cannot benchmark the shell: "echo hi" gave ${JSON.stringify(result)}`);
    }
  };
}
