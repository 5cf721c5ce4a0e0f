/**
 * One run of the bash scenario (issue 21): `ROUNDS` model replies that each make one `bash` call
 * to `echo`, then an answer, from a fresh scripted model server on 127.0.0.1; run through
 * `bin/tern run --mode bypass` (bubblewrap applies) or through the reference agent
 * (bench/reference_agent.ts, no sandbox). GNU time (`/usr/bin/time -o`) gives the CPU and the
 * largest process's peak RSS (the largest single process it waited for, bubblewrap's included);
 * with `watchTree`, the whole tree's memory is sampled too (bench/_tree_memory.ts).
 */
import { join } from "node:path";
import { startScriptedServer } from "../tests/support/scripted_server.ts";
import type { ModelRequest } from "../src/llm/types.ts";
import type { ScriptedReply } from "../src/llm/scripted.ts";
import { ROOT } from "../tests/support/tern_process.ts";
import { startTreeWatch, type TreeMemory } from "./_tree_memory.ts";

/** Tool rounds before the answer. */
export const ROUNDS = 10;

/** Who runs the scenario. */
export type Agent = "tern" | "reference";

/** What one run took, in milliseconds unless named otherwise. */
export interface AgentRun {
  /** From the spawn to the model server receiving the first request. */
  firstRequest: number;
  /** From the first request's arrival to the second's: reply, first tool call, next request. */
  round1: number;
  /** The gaps between consecutive requests for rounds 2 to the last. */
  laterRounds: number[];
  /** From the spawn to the process's exit. */
  wall: number;
  /** User plus system CPU seconds of the process and everything it waited for. */
  cpuSeconds: number;
  /** Peak RSS of the largest single process, in MB. */
  maxRssMb: number;
  /** `performance.now()` at the spawn and at the exit, to attribute DNS queries to the run. */
  spawnedAt: number;
  exitedAt: number;
  /** The whole process tree's peaks, when the place asked for them (`watchTree`). */
  tree?: TreeMemory;
}

/** Where and how the runs happen. */
export interface RunPlace {
  workspace: string;
  home: string;
  /** Environment for every run (PATH, DENO_DIR...). */
  env: Record<string, string>;
  /** tern only: `TERN_PHASE_MARKS` for this run (the phase marks' file). */
  profile?: string;
  /** Tool rounds before the answer (default {@linkcode ROUNDS}). */
  rounds?: number;
  /** Sample the memory of the whole process tree while it runs. */
  watchTree?: boolean;
  /** What each round's command is (see {@linkcode bashScript}); `echo` by default. */
  commands?: RoundCommands;
}

/**
 * `echo`: `echo round <n>`. `heredoc`: a here-doc that writes `out.txt`, then `cat out.txt`: a
 * command that writes (the sandbox searches the workspace again after it), which the plain
 * scanner reads (src/sandbox/shell/_plain.ts). `parsed`: a loop that writes `out.txt` through a
 * variable, then `cat`: a command only tree-sitter reads, so its runtime and grammar load.
 */
export type RoundCommands = "echo" | "heredoc" | "parsed";

const TASK = "run echo once per round, then say done";
const decoder = new TextDecoder();

/**
 * The scripted model: a command per round (`commands`, see {@linkcode RoundCommands}) while fewer
 * than `rounds` tool results came back, then "done". It counts the request's tool results, not
 * the server's requests, so one server can serve many runs (bench/scenario_server.ts).
 */
export function bashScript(
  rounds = ROUNDS,
  commands: RoundCommands = "echo",
): (request: ModelRequest) => ScriptedReply {
  return (request) => {
    const n = request.messages.filter((m) => m.role === "tool").length;
    if (n >= rounds) return { text: "done" };
    const command = {
      echo: `echo round ${n}`,
      heredoc: `cat > out.txt <<'EOF'\nround ${n}\nEOF\ncat out.txt`,
      parsed: `for f in out.txt; do echo round ${n} > "$f"; done; cat out.txt`,
    }[commands];
    const args = JSON.stringify({ command });
    return { toolCalls: [{ id: `c${n}`, name: "bash", arguments: args }] };
  };
}

/** The command line that runs `agent` against `baseUrl`. */
function commandLine(agent: Agent, baseUrl: string, rounds: number): string[] {
  if (agent === "tern") {
    return [
      join(ROOT, "bin/tern"),
      "run",
      ...["--base-url", baseUrl, "--model", "bench", "--mode", "bypass"],
      ...["--max-rounds", String(rounds + 1), "--output", "json", TASK],
    ];
  }
  const host = new URL(baseUrl).host;
  return [
    Deno.execPath(),
    ...["run", "--no-config", "--no-prompt", `--allow-net=${host}`, "--allow-run=bash"],
    join(ROOT, "bench/reference_agent.ts"),
    ...[baseUrl, "bench", TASK],
  ];
}

/**
 * Checks that every round's `echo` really ran: request n+1 ends with the output of round n.
 * Throws when one did not, so a broken run is never timed as a fast one.
 */
function checkEchoes(requests: ModelRequest[], agent: Agent, rounds: number): void {
  if (requests.length !== rounds + 1) {
    throw new Error(`Cannot time ${agent}: ${requests.length} model requests, not ${rounds + 1}`);
  }
  for (let n = 0; n < rounds; n++) {
    const last = requests[n + 1].messages.at(-1);
    if (last?.role !== "tool" || !last.content.includes(`round ${n}`)) {
      const seen = JSON.stringify(last?.content ?? "").slice(0, 300);
      throw new Error(`Cannot time ${agent}: round ${n} did not echo; the tool result was ${seen}`);
    }
  }
}

/** Runs the scenario once through `agent` and times it. */
export async function runScenario(agent: Agent, place: RunPlace): Promise<AgentRun> {
  const arrivals: number[] = [];
  const rounds = place.rounds ?? ROUNDS;
  const server = await startScriptedServer(bashScript(rounds, place.commands), {
    chunkDelayMs: 0,
    onRequest: () => arrivals.push(performance.now()),
  });
  const timeFile = await Deno.makeTempFile({ prefix: "tern-bench-time-" });
  try {
    const env: Record<string, string> = { ...place.env, HOME: place.home, TERN_HOME: place.home };
    if (agent === "tern" && place.profile) env.TERN_PHASE_MARKS = place.profile;
    const sampler = place.watchTree ? await startTreeWatch() : undefined;
    const spawnedAt = performance.now();
    const child = new Deno.Command("/usr/bin/time", {
      args: ["-o", timeFile, "-f", "%M %U %S", ...commandLine(agent, server.baseUrl, rounds)],
      cwd: place.workspace,
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    await sampler?.watch(child.pid);
    const out = await child.output();
    const exitedAt = performance.now();
    const tree = await sampler?.stop();
    const stdout = decoder.decode(out.stdout);
    if (!out.success) {
      throw new Error(`Cannot time ${agent}: exit ${out.code}\n${decoder.decode(out.stderr)}`);
    }
    const answer = agent === "tern" ? JSON.parse(stdout).text : stdout.trim();
    if (answer !== "done") throw new Error(`Cannot time ${agent}: it answered ${stdout}`);
    checkEchoes(server.requests.map((r) => r.modelRequest), agent, rounds);
    const [rssKb, user, system] = (await Deno.readTextFile(timeFile)).trim().split("\n").at(-1)!
      .split(" ").map(Number);
    const gaps = arrivals.slice(1).map((t, i) => t - arrivals[i]);
    return {
      firstRequest: arrivals[0] - spawnedAt,
      round1: gaps[0],
      laterRounds: gaps.slice(1, rounds),
      wall: exitedAt - spawnedAt,
      cpuSeconds: user + system,
      maxRssMb: rssKb / 1024,
      spawnedAt,
      exitedAt,
      ...(tree === undefined ? {} : { tree }),
    };
  } finally {
    await server.close();
    await Deno.remove(timeFile);
  }
}
