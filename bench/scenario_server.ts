/**
 * The bash scenario's model as a program, for timing whole runs with outside tools (e.g.
 * `/usr/bin/time -v`, hyperfine): serves `[rounds]` (default 10) replies that each call `bash`
 * to `echo`, then "done", for any number of runs in turn; prints `LISTENING <baseUrl>`.
 *
 * Usage: deno run --allow-net=127.0.0.1 bench/scenario_server.ts [rounds]
 */
import { startScriptedServer } from "../tests/support/scripted_server.ts";
import { bashScript, ROUNDS } from "./_agent_runs.ts";

const rounds = Number(Deno.args[0] ?? ROUNDS);
if (!Number.isInteger(rounds) || rounds < 0) {
  console.error(`Cannot serve the bash scenario: "${Deno.args[0]}" is not a count of rounds`);
  Deno.exit(2);
}
const server = await startScriptedServer(bashScript(rounds), { chunkDelayMs: 0 });
const stop = () => void server.close().finally(() => Deno.exit(0));
Deno.addSignalListener("SIGTERM", stop);
Deno.addSignalListener("SIGINT", stop);
console.log(`LISTENING ${server.baseUrl}`);
