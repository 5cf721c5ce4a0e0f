/**
 * Runs one scenario of the scenario benchmark: a fresh workspace and TERN_HOME, the scripted
 * model server (and a web server) on 127.0.0.1, then each step as the real `tern` process, as
 * bin/tern starts it; then the checks. Nothing runs in process but the servers.
 */
import { join } from "../src/core/path.ts";
import type { Message } from "../src/core/messages.ts";
import type { ModelRequest } from "../src/llm/types.ts";
import type { ScriptedReply } from "../src/llm/scripted.ts";
import { type ScriptedServer, startScriptedServer } from "../tests/support/scripted_server.ts";
import { declaredFlags, ROOT } from "../tests/support/tern_process.ts";
import { REFERENCE_SERVERS } from "../tests/support/needs.ts";
import type { Expect, Patterns, Scenario, ScenarioResult, Step, Turn } from "./_scenario_types.ts";

/** The key tern is given; no request body or output may carry it. */
const KEY = "sk-scenario-KEY-7d31c0a9";

/** The person's HOME, and Deno's cache there (tern's start and MCP servers run from it). */
const REAL_HOME = Deno.env.get("HOME") ?? "/root";
const DENO_DIR = Deno.env.get("DENO_DIR") ?? join(REAL_HOME, ".cache/deno");

/**
 * What tern runs: main.ts, or the single file of bin/compile named by TERN_BENCH_ENTRY (run with
 * `--no-config`, as bin/compile says), so the scenarios can check the artifact.
 */
const ENTRY = Deno.env.get("TERN_BENCH_ENTRY")
  ? ["--no-config", Deno.env.get("TERN_BENCH_ENTRY")!]
  : [join(ROOT, "main.ts")];

/** A scenario's failed check. */
class CheckError extends Error {}

/** What a scenario run has: its folders, servers and captured values. */
interface Bench {
  dir: string;
  home: string;
  vars: Record<string, string>;
  servers: ScriptedServer[];
}

/** The text of a message for `when` matching: its role, content and tool calls. */
function messageText(message: Message): string {
  const content = typeof message.content === "string"
    ? message.content
    : JSON.stringify(message.content);
  const calls = "toolCalls" in message && message.toolCalls !== undefined
    ? JSON.stringify(message.toolCalls)
    : "";
  return `${message.role}: ${content}${calls}`;
}

/**
 * The script of `turns`: each request gets the first unused turn it matches, with `vars` put
 * into its text and call arguments.
 */
export function turnScript(turns: readonly Turn[], vars: Record<string, string> = {}) {
  const used = turns.map(() => 0);
  return (request: ModelRequest): ScriptedReply => {
    const all = request.messages.map(messageText).join("\n");
    const last = messageText(request.messages.at(-1) ?? { role: "user", content: "" });
    const index = turns.findIndex((turn, i) => {
      const times = turn.times ?? 1;
      if (times !== 0 && used[i] >= times) return false;
      if (turn.when !== undefined && !all.includes(turn.when)) return false;
      return turn.whenLast === undefined || last.includes(turn.whenLast);
    });
    if (index < 0) throw new Error(`no turn matches the request ending "${last.slice(-300)}"`);
    used[index]++;
    const { when: _w, whenLast: _l, times: _t, ...reply } = turns[index];
    // Paths and URLs need no escaping inside the JSON text.
    return JSON.parse(fill(JSON.stringify(reply), vars));
  };
}

/** `text` with each `{name}` of `vars` put in. */
function fill(text: string, vars: Record<string, string>): string {
  return text.replace(/\{(\w+)\}/g, (all, name: string) => vars[name] ?? all);
}

function check(ok: boolean, message: string): void {
  if (!ok) throw new CheckError(message);
}

/** Checks each pattern (`!re`: must not match) against `text`. */
function matchAll(what: string, text: string, patterns: Patterns | undefined, vars: Bench["vars"]) {
  for (const raw of patterns ?? []) {
    const negated = raw.startsWith("!");
    const pattern = fill(negated ? raw.slice(1) : raw, vars);
    const found = new RegExp(pattern, "m").test(text);
    check(
      found !== negated,
      `${what} ${negated ? "matches" : "does not match"} /${pattern}/: ${text.slice(-1500)}`,
    );
  }
}

/** The value at a dotted path of `value`. */
function at(value: unknown, path: string): unknown {
  let here = value;
  for (const key of path.split(".")) {
    here = typeof here === "object" && here !== null
      ? (here as Record<string, unknown>)[key]
      : undefined;
  }
  return here;
}

async function writeFiles(
  base: string,
  files: Record<string, string> | undefined,
  vars: Bench["vars"],
) {
  for (const [path, text] of Object.entries(files ?? {})) {
    const file = join(base, path);
    await Deno.mkdir(join(file, ".."), { recursive: true });
    await Deno.writeTextFile(file, fill(text, vars));
  }
}

/** Every file under `dir` with `suffix`, as one text (none: ""). */
async function textUnder(dir: string, suffix: string): Promise<{ text: string; count: number }> {
  let text = "";
  let count = 0;
  const walk = async (here: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(here));
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(here, entry.name);
      if (entry.isDirectory) await walk(path);
      else if (entry.isFile && entry.name.endsWith(suffix)) {
        count++;
        text += await Deno.readTextFile(path);
      }
    }
  };
  await walk(dir);
  return { text, count };
}

/** Runs one step: the real tern process, signalled when the step says. */
async function runStep(step: Step, scenario: Scenario, bench: Bench): Promise<void> {
  const args = step.args.map((arg) => fill(arg, bench.vars));
  const env: Record<string, string> = {
    HOME: bench.home,
    TERN_HOME: bench.home,
    TERN_API_KEY: KEY,
    DENO_DIR,
  };
  for (const [name, value] of Object.entries({ ...scenario.env, ...step.env })) {
    env[name] = fill(value, bench.vars);
  }
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...declaredFlags(env, { cwd: bench.dir, args }), ...ENTRY, ...args],
    cwd: bench.dir,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
    clearEnv: true,
    stdin: step.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (step.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(fill(step.stdin, bench.vars)));
    await writer.close();
  }
  const output = child.output();
  if (step.signal !== undefined) {
    const { name, afterRequests = 0, afterFile } = step.signal;
    let done = false;
    output.finally(() => done = true);
    const ready = async () =>
      bench.servers[0].requests.length >= afterRequests &&
      (afterFile === undefined ||
        await Deno.stat(join(bench.dir, afterFile)).then(() => true, () => false));
    while (!done && !(await ready())) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (!done) child.kill(name);
  }
  const out = await output;
  const decoder = new TextDecoder();
  const stdout = decoder.decode(out.stdout);
  const stderr = decoder.decode(out.stderr);
  const where = `tern ${args.join(" ").slice(0, 200)}`;
  const code = out.signal === "SIGKILL" ? 137 : out.code;
  check(
    code === (step.code ?? 0),
    `${where}: exit ${code}, expected ${step.code ?? 0}\nstderr: ${stderr.slice(-2000)}\nstdout: ${
      stdout.slice(-1000)
    }`,
  );
  check(!stdout.includes(KEY) && !stderr.includes(KEY), `${where}: the key reached the output`);
  matchAll(`${where} stdout`, stdout, step.stdout, bench.vars);
  matchAll(`${where} stderr`, stderr, step.stderr, bench.vars);
  for (const [name, path] of Object.entries(step.capture ?? {})) {
    if (!path.startsWith("/")) continue;
    const found = new RegExp(path.slice(1, -1), "m").exec(stdout);
    check(found !== null, `${where}: nothing to capture for ${name}: ${stdout.slice(0, 1500)}`);
    bench.vars[name] = found![1];
  }
  const captures = Object.entries(step.capture ?? {}).filter(([, path]) => !path.startsWith("/"));
  if (step.json !== undefined || captures.length > 0) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(stdout);
    } catch {
      throw new CheckError(`${where}: stdout is not JSON: ${stdout.slice(0, 500)}`);
    }
    for (const [path, want] of Object.entries(step.json ?? {})) {
      const got = at(parsed, path);
      check(
        JSON.stringify(got) === fill(JSON.stringify(want), bench.vars),
        `${where}: ${path} is ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`,
      );
    }
    for (const [name, path] of captures) {
      bench.vars[name] = String(at(parsed, path));
    }
  }
}

async function checkExpect(expect: Expect, bench: Bench): Promise<void> {
  for (const [path, want] of Object.entries(expect.files ?? {})) {
    const got = await Deno.readTextFile(join(bench.dir, path)).catch(() => null);
    check(
      got === (want === null ? null : fill(want, bench.vars)),
      `${path} is ${JSON.stringify(got)}`,
    );
  }
  for (const [path, patterns] of Object.entries(expect.fileMatches ?? {})) {
    const got = await Deno.readTextFile(join(bench.dir, path)).catch(() => "<absent>");
    matchAll(path, got, patterns, bench.vars);
  }
  for (const [path, want] of Object.entries(expect.outside ?? {})) {
    const file = fill(path, bench.vars);
    const got = await Deno.readTextFile(file).catch(() => null);
    check(got === want, `${file} is ${JSON.stringify(got)}`);
  }
  const requests = bench.servers.flatMap((server) => server.requests);
  if (expect.requests !== undefined) {
    check(
      requests.length === expect.requests,
      `the model got ${requests.length} requests, expected ${expect.requests}`,
    );
  }
  const sent = requests.map((r) => r.modelRequest.messages.map(messageText).join("\n"));
  matchAll("what the model was sent", sent.join("\n----\n"), expect.sent, bench.vars);
  matchAll(
    "the request bodies",
    requests.map((r) => JSON.stringify(r.body)).join("\n"),
    expect.wire,
    bench.vars,
  );
  if (expect.paths !== undefined) {
    const paths = requests.map((r) => r.path);
    check(JSON.stringify(paths) === JSON.stringify(expect.paths), `request paths ${paths}`);
  }
  const sessions = await textUnder(join(bench.home, "sessions"), ".jsonl");
  matchAll("the session files", sessions.text, expect.session, bench.vars);
  if (expect.sessions !== undefined) {
    check(sessions.count === expect.sessions, `${sessions.count} session files`);
  }
  const audit = await textUnder(join(bench.home, "audit"), "");
  matchAll("the audit log", audit.text, expect.audit, bench.vars);
  for (const text of expect.noProcesses ?? []) {
    const left = await processesLeft(text);
    check(left.length === 0, `processes still run: ${left.join("; ")}`);
  }
}

/**
 * The live processes whose command line holds `text`, once none is left or two seconds have
 * passed (a process killed a moment ago may not be reaped yet).
 */
async function processesLeft(text: string): Promise<string[]> {
  const deadline = Date.now() + 2_000;
  for (;;) {
    const ps = await new Deno.Command("ps", { args: ["-eo", "stat=,args="] }).output();
    const left = new TextDecoder().decode(ps.stdout).split("\n")
      .map((line) => line.trim())
      .filter((line) => !line.startsWith("Z") && line.includes(text));
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Serves `pages` on 127.0.0.1 (404 elsewhere); returns its URL and how to stop it. */
function webServer(pages: Record<string, string>) {
  const closing = new AbortController();
  const { promise, resolve } = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: closing.signal, onListen: resolve },
    (req) => {
      const page = pages[new URL(req.url).pathname];
      return page === undefined
        ? new Response("not found", { status: 404 })
        : new Response(page, { headers: { "content-type": "text/html; charset=utf-8" } });
    },
  );
  return promise.then((addr) => ({
    url: `http://127.0.0.1:${addr.port}`,
    close: async () => {
      closing.abort();
      await server.finished;
    },
  }));
}

/** Runs `scenario` from `file`; never throws (a failure is in the result). */
export async function runScenario(
  scenario: Scenario,
  file: string,
  missing: ReadonlySet<string>,
): Promise<ScenarioResult> {
  const start = performance.now();
  const base = { name: scenario.name, area: scenario.area, file, steps: scenario.steps.length };
  const absent = (scenario.needs ?? []).filter((need) => missing.has(need));
  if (absent.length > 0) {
    return { ...base, status: "skip", ms: 0, requests: 0, detail: `needs ${absent.join(", ")}` };
  }
  const tmp = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-scenario-" }));
  const bench: Bench = {
    dir: join(tmp, "ws"),
    home: join(tmp, "home"),
    vars: {},
    servers: [],
  };
  const stops: Array<() => Promise<void>> = [];
  try {
    await Deno.mkdir(bench.dir);
    await Deno.mkdir(bench.home);
    bench.servers.push(
      await startScriptedServer(turnScript(scenario.turns ?? [], bench.vars), { chunkDelayMs: 0 }),
    );
    stops.push(() => bench.servers[0].close());
    if (scenario.turns2 !== undefined) {
      bench.servers.push(
        await startScriptedServer(turnScript(scenario.turns2, bench.vars), { chunkDelayMs: 0 }),
      );
      stops.push(() => bench.servers[1].close());
    }
    Object.assign(bench.vars, {
      dir: bench.dir,
      home: bench.home,
      root: ROOT,
      deno: Deno.execPath(),
      realHome: REAL_HOME,
      denoDir: DENO_DIR,
      mcpEverything: REFERENCE_SERVERS.everything,
      mcpFilesystem: REFERENCE_SERVERS.filesystem,
      baseUrl: bench.servers[0].baseUrl,
      baseUrl2: bench.servers[1]?.baseUrl ?? "",
      modelPort: new URL(bench.servers[0].baseUrl).port,
    });
    if (scenario.web !== undefined) {
      const web = await webServer(scenario.web);
      stops.push(web.close);
      bench.vars.webUrl = web.url;
    }
    await writeFiles(bench.dir, scenario.files, bench.vars);
    for (const [to, from] of Object.entries(scenario.copy ?? {})) {
      await Deno.copyFile(join(ROOT, from), join(bench.dir, to));
    }
    await writeFiles(bench.home, scenario.homeFiles, bench.vars);
    for (const step of scenario.steps) await runStep(step, scenario, bench);
    await checkExpect(scenario.expect ?? {}, bench);
    const bodies = bench.servers.flatMap((s) => s.requests).map((r) => JSON.stringify(r.body));
    check(!bodies.some((body) => body.includes(KEY)), "a request body carried the key");
    return {
      ...base,
      status: "pass",
      ms: performance.now() - start,
      requests: requestCount(bench),
    };
  } catch (error) {
    const detail = error instanceof CheckError
      ? error.message
      : `${error instanceof Error ? error.stack : error}`;
    return {
      ...base,
      status: "fail",
      ms: performance.now() - start,
      requests: requestCount(bench),
      detail,
    };
  } finally {
    for (const stop of stops) await stop().catch(() => {});
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

function requestCount(bench: Bench): number {
  return bench.servers.reduce((sum, server) => sum + server.requests.length, 0);
}
