/**
 * End-to-end: what a new user's `tern run` says when the model's host refuses the key, has no
 * such path or model, or does not resolve: what to fix, naming the key's variable (never its
 * value) and the URL asked (its key parameter hidden), and failing at once where trying again
 * cannot help. The real `tern` against the scripted model server on 127.0.0.1.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { filesUnder } from "../support/files_under.ts";
import { type ScriptedServer, withScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace, type TernRun } from "../support/tern_process.ts";

const KEY = "sk-person-SECRET-7e6d5c4b3a29";

interface Bench {
  server: ScriptedServer;
  home: string;
  dir: string;
  tern(args: string[], env: Record<string, string>): Promise<TernRun>;
}

async function withBench(fn: (bench: Bench) => Promise<void>): Promise<void> {
  await withScriptedServer(() => ({ fault: "http401" }), async (server) => {
    const ws = await tempWorkspace();
    try {
      await fn({
        server,
        home: ws.home,
        dir: ws.dir,
        tern: (args, env) =>
          runTern([...args, "--mode", "bypass", "task"], {
            cwd: ws.dir,
            env: { TERN_HOME: ws.home, HOME: ws.home, ...env },
          }),
      });
    } finally {
      await ws.cleanup();
    }
  }, { chunkDelayMs: 0 });
}

/** Neither the output nor any file tern wrote holds `secret`. */
async function assertNowhere(secret: string, run: TernRun, bench: Bench): Promise<void> {
  ok(!run.stdout.includes(secret) && !run.stderr.includes(secret), run.stderr);
  for (const file of [...await filesUnder(bench.home), ...await filesUnder(bench.dir)]) {
    ok(!(await Deno.readTextFile(file)).includes(secret), `the secret is in ${file}`);
  }
}

Deno.test("tern run names the variable of a refused key and tern doctor, never the key", async () => {
  await withBench(async (bench) => {
    const run = await bench.tern(
      [
        "run",
        "--provider",
        "anthropic",
        "--base-url",
        bench.server.baseUrl,
        "-m",
        "claude-sonnet-4-5",
      ],
      { ANTHROPIC_API_KEY: KEY },
    );
    equal(run.code, 7, run.stderr);
    ok(
      run.stderr.includes(
        `HTTP 401 from model API: Incorrect API key provided; provider "anthropic" at ` +
          `"${bench.server.baseUrl}" refused the key from ANTHROPIC_API_KEY: set ` +
          "ANTHROPIC_API_KEY (in the environment or .env) to a valid key for it; " +
          "`tern doctor` checks the setup",
      ),
      run.stderr,
    );
    equal(bench.server.requests.length, 1, "a refused key is not tried again");
    await assertNowhere(KEY, run, bench);
  });
});

Deno.test("tern run names the variable apiKeyEnv chose when its key is refused", async () => {
  await withBench(async (bench) => {
    await Deno.writeTextFile(
      join(bench.home, "config.jsonc"),
      '{ "apiKeyEnv": "TERN_GATEWAY_KEY" }\n',
    );
    const run = await bench.tern(
      ["run", "--base-url", bench.server.baseUrl, "-m", "scripted"],
      { TERN_GATEWAY_KEY: KEY },
    );
    equal(run.code, 7, run.stderr);
    ok(
      run.stderr.includes("refused the key from TERN_GATEWAY_KEY: set TERN_GATEWAY_KEY"),
      run.stderr,
    );
    await assertNowhere(KEY, run, bench);
  });
});

Deno.test("tern run on a 404 names the URL it asked, its key parameter hidden, and the model", async () => {
  await withBench(async (bench) => {
    const origin = new URL(bench.server.baseUrl).origin;
    const run = await bench.tern(
      ["run", "--base-url", `${origin}/wrong?key=${KEY}`, "-m", "scripted"],
      {},
    );
    equal(run.code, 7, run.stderr);
    ok(
      run.stderr.includes(
        "the base URL or the model is likely wrong: tern asked " +
          `"${origin}/wrong/chat/completions?key=***" for model "scripted"; check the base URL`,
      ),
      run.stderr,
    );
    await assertNowhere(KEY, run, bench);
  });
});

/** Whether this machine's resolver says that a `.invalid` name does not exist. */
async function resolverAnswers(): Promise<boolean> {
  const probe = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      'try { await Deno.resolveDns("tern-probe.invalid", "A") } catch (e) { ' +
      'console.log(e instanceof Deno.errors.NotFound ? "not-found" : "other") }',
    ],
    stdout: "piped",
    stderr: "null",
    signal: AbortSignal.timeout(15_000),
  }).output().catch(() => undefined);
  return probe !== undefined && new TextDecoder().decode(probe.stdout).trim() === "not-found";
}

const resolves = await resolverAnswers();
if (!resolves) {
  console.warn(
    "\n!!!!! SKIPPED: the test of a base URL whose host does not resolve: no DNS server " +
      "answered here for a .invalid name !!!!!\n",
  );
}

Deno.test({
  name: "tern run fails at once, naming the host, when the base URL's host does not resolve",
  ignore: !resolves,
  fn: async () => {
    await withBench(async (bench) => {
      const started = performance.now();
      const run = await bench.tern(
        ["run", "--base-url", "http://no-such-model-host.invalid/v1", "-m", "scripted"],
        { TERN_API_KEY: KEY, TERN_RETRY_BASE_MS: "2000" },
      );
      equal(run.code, 7, run.stderr);
      ok(
        run.stderr.includes(
          'Cannot connect to model API at "http://no-such-model-host.invalid": host ' +
            '"no-such-model-host.invalid" not found (its name does not resolve): check the ' +
            'base URL (--base-url, TERN_BASE_URL or "baseUrl" in the config) and your network',
        ),
        run.stderr,
      );
      ok(!/retry|gave up/.test(run.stderr), run.stderr);
      // Four retries would wait at least 1 + 2 + 4 + 8 s with this backoff.
      ok(performance.now() - started < 10_000);
      await assertNowhere(KEY, run, bench);
    });
  },
});
