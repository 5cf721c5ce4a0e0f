/**
 * Start-up benchmark of the interactive UI (issue 6): `tern` with no task, started through
 * `bin/tern` as people start it (the launcher works out the permission flags and execs Deno),
 * inside a pseudo-terminal (util-linux `script`, 100×30).
 *
 * - prompt: from spawning to the first appearance of the editor's placeholder
 *   (`ask tern, or / for commands`) in the terminal's output bytes
 * - first key: a printable key written the moment the prompt appears, until the frame that
 *   shows it: what someone typing at once waits while tern loads the rest behind the prompt
 * - keystroke: once the output has been quiet for a second, from writing one more printable
 *   key into the terminal to the frame that shows it (the whole path: pty, decoder, editor,
 *   screen)
 * - floor: the same `script` path running `deno run` of a script that prints one line
 *
 * TERN_BASE_URL points at a local server that records every request: none may arrive before
 * the prompt is shown (no network call on the start path). Each run ends with Ctrl-D.
 *
 * The first warm-up run starts with an empty Deno cache (HOME is a fresh directory, so is
 * DENO_DIR): its prompt time is reported as the cold start.
 *
 * Target: prompt ≤ 150 ms. Writes bench/results/tui_start.json and tui_start.md.
 * Usage: deno run <permissions> bench/tui_start.ts [runs] [main.ts of another checkout]
 * (with another checkout, e.g. a patched copy for an experiment, nothing is written).
 */
import { dirname, join } from "node:path";
import { ROOT } from "../tests/support/tern_process.ts";
import { benchEnv, inTerminal, PROMPT } from "./_pty.ts";
import { type Stats, stats } from "./_stats.ts";

const RUNS = Number(Deno.args[0] ?? 10);
const MAIN = Deno.args[1] ?? join(ROOT, "main.ts");
const WARMUPS = 2;
const FLOOR_MARK = "tern-bench-floor-ready";
/** The key typed at the prompt, and the editor row its frame draws. */
const FIRST = "q";
const FIRST_ROW = "\u203a q";
/** The key typed once the screen is quiet, and the editor row its frame draws. */
const TYPED = "w";
const TYPED_ROW = "\u203a qw";
const QUIET_MS = 1_000;
const deno = Deno.execPath();

/** A request log on 127.0.0.1: arrival time (performance.now()) and `METHOD /path`. */
function startRecorder() {
  const requests: Array<{ at: number; what: string }> = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    requests.push({ at: performance.now(), what: `${req.method} ${new URL(req.url).pathname}` });
    return new Response("not a model server", { status: 503 });
  });
  return { baseUrl: `http://127.0.0.1:${server.addr.port}/v1`, requests, server };
}

/** Spawn to the floor script's line, through the same pseudo-terminal path. */
async function timeFloor(workspace: string, env: Record<string, string>): Promise<number> {
  const script = join(workspace, "floor.js");
  const run = inTerminal([deno, "run", "--no-config", script], { cwd: workspace, env });
  const at = await run.output.seen(FLOOR_MARK);
  await run.child.stdin.close();
  await run.output.done;
  const status = await run.child.status;
  if (!status.success) throw new Error("The floor script failed");
  return at - run.start;
}

interface StartTiming {
  prompt: number;
  firstKey: number;
  keystroke: number;
  /** Requests that arrived before the prompt was seen, and in the whole session. */
  early: string[];
  total: number;
}

/** One interactive session: spawn, wait for the prompt, type two keys, leave with Ctrl-D. */
async function timeStart(workspace: string, env: Record<string, string>): Promise<StartTiming> {
  const recorder = startRecorder();
  try {
    const run = inTerminal([join(dirname(MAIN), "bin", "tern")], {
      cwd: workspace,
      env: { ...env, TERN_BASE_URL: recorder.baseUrl },
    });
    const writer = run.child.stdin.getWriter();
    try {
      const promptAt = await run.output.seen(PROMPT);
      const early = recorder.requests.filter((r) => r.at <= promptAt).map((r) => r.what);
      const firstFrom = run.output.text.length;
      const firstTypedAt = performance.now();
      await writer.write(new TextEncoder().encode(FIRST));
      const firstAt = await run.output.seen(FIRST_ROW, firstFrom);
      // Background work (the sandbox, the model setup) redraws the status line: let it settle.
      await run.output.quiet(QUIET_MS);
      const from = run.output.text.length;
      const typedAt = performance.now();
      await writer.write(new TextEncoder().encode(TYPED));
      const frameAt = await run.output.seen(TYPED_ROW, from);
      await writer.write(new TextEncoder().encode("\x7f\x7f\x04")); // 2 backspaces, Ctrl-D
      await writer.close();
      await run.output.done;
      const status = await run.child.status;
      if (!status.success || !run.output.text.includes("tern: session")) {
        throw new Error(`tern did not exit cleanly:\n${run.output.text.slice(-2000)}`);
      }
      return {
        prompt: promptAt - run.start,
        firstKey: firstAt - firstTypedAt,
        keystroke: frameAt - typedAt,
        early,
        total: recorder.requests.length,
      };
    } catch (error) {
      try {
        run.child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
      throw error;
    }
  } finally {
    await recorder.server.shutdown();
  }
}

if (!new Deno.Command("script", { args: ["--version"] }).outputSync().success) {
  throw new Error('Cannot run the start benchmark: "script" (util-linux) is not installed');
}

const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-bench-tui-ws-" }));
const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-bench-tui-home-" }));
try {
  await Deno.writeTextFile(join(workspace, "floor.js"), `console.log("${FLOOR_MARK}");\n`);
  const env = benchEnv(home);
  const loadBefore = Deno.loadavg()[0];
  const floor: number[] = [];
  const starts: StartTiming[] = [];
  for (let i = 0; i < RUNS + WARMUPS; i++) {
    const f = await timeFloor(workspace, env);
    const s = await timeStart(workspace, env);
    if (s.early.length > 0) throw new Error(`Requests on the start path: ${s.early.join(", ")}`);
    starts.push(s);
    if (i >= WARMUPS) floor.push(f);
  }
  const timed = starts.slice(WARMUPS);
  const results = {
    date: new Date().toISOString(),
    deno: Deno.version.deno,
    main: MAIN,
    runs: RUNS,
    loadAverage: [loadBefore, Deno.loadavg()[0]].map((n) => Math.round(n * 100) / 100),
    floorMs: stats(floor),
    promptMs: stats(timed.map((s) => s.prompt)),
    coldPromptMs: Math.round(starts[0].prompt * 10) / 10,
    firstKeyMs: stats(timed.map((s) => s.firstKey)),
    keystrokeMs: stats(timed.map((s) => s.keystroke)),
    requestsBeforePrompt: 0,
    requestsPerSession: Math.max(...starts.map((s) => s.total)),
    targets: { promptMs: 150 },
  };
  const row = (name: string, s: Stats, target: string) =>
    `| ${name} | ${s.median} | ${s.p90} | ${s.min} | ${target} |`;
  const md = [
    `# Interactive start-up (${results.date.slice(0, 10)}, Deno ${results.deno}, ${RUNS} runs)`,
    "",
    "Measured by `bench/tui_start.ts`: `tern` started through `bin/tern` in a 100×30",
    `pseudo-terminal (util-linux \`script\`), after ${WARMUPS} warm-up runs. 1-minute load average`,
    `${results.loadAverage.join(" → ")} on 2 shared cores.`,
    "",
    "| measure (ms) | median | p90 | min | target |",
    "| --- | --- | --- | --- | --- |",
    row("floor: `deno run` of a one-line script", results.floorMs, "—"),
    row("`tern` start to usable prompt", results.promptMs, "≤ 150"),
    row("key typed at the prompt to its frame", results.firstKeyMs, "—"),
    row("keystroke to frame once quiet, through the pty", results.keystrokeMs, "—"),
    "",
    `Cold start (first run, empty Deno cache): ${results.coldPromptMs} ms to the prompt.`,
    "Requests to the model server before the prompt: none in any run; in a whole session:",
    `${results.requestsPerSession} at most.`,
    "",
  ].join("\n");
  if (Deno.args[1] === undefined) {
    await Deno.mkdir(join(ROOT, "bench/results"), { recursive: true });
    await Deno.writeTextFile(
      join(ROOT, "bench/results/tui_start.json"),
      JSON.stringify(results, null, 2) + "\n",
    );
    await Deno.writeTextFile(join(ROOT, "bench/results/tui_start.md"), md);
  }
  console.log(md);
} finally {
  await Deno.remove(workspace, { recursive: true });
  await Deno.remove(home, { recursive: true });
}
