/** End-to-end: the real `tern` process against the scripted OpenAI-compatible server. */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { declaredFlags, ROOT, runTern, tempWorkspace } from "../support/tern_process.ts";

const SECRET = "sk-test-SECRET-4f9a7c21e8";

function call(name: string, args: unknown, id: string): ScriptedReply {
  return { toolCalls: [{ id, name, arguments: JSON.stringify(args) }] };
}

/** Starts a server and a workspace, runs tern with `args`, and cleans both up. */
async function withTern(
  script: ScriptedReply[] | ((req: never, i: number) => ScriptedReply),
  args: string[],
  setup?: (dir: string) => Promise<void>,
) {
  const server = await startScriptedServer(script as ScriptedReply[], { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    await setup?.(ws.dir);
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: SECRET };
    const run = await runTern(["run", "--base-url", server.baseUrl, "-m", "scripted", ...args], {
      cwd: ws.dir,
      env,
    });
    const files = new Map<string, string>();
    for (const entry of Deno.readDirSync(ws.dir)) {
      if (entry.isFile) files.set(entry.name, Deno.readTextFileSync(join(ws.dir, entry.name)));
    }
    return { run, requests: server.requests, files };
  } finally {
    await server.close();
    await ws.cleanup();
  }
}

function assertNoSecret(...texts: string[]) {
  for (const text of texts) ok(!text.includes(SECRET), "the API key leaked into output");
}

Deno.test("tern run completes a multi-round task that edits a file and runs a command", async () => {
  const script = (_req: never, i: number): ScriptedReply => {
    switch (i) {
      case 0:
        return { text: "Reading the config.", ...call("read", { path: "app.cfg" }, "c0") };
      case 1:
        return call("edit", {
          path: "app.cfg",
          old_string: "version = 1",
          new_string: "version = 2",
        }, "c1");
      case 2:
        return call("bash", { command: "cat app.cfg && env" }, "c2");
      default:
        return { text: "Bumped the version to 2 and checked it." };
    }
  };
  const { run, requests, files } = await withTern(
    script,
    ["-o", "json", "--mode", "bypass", "bump the version"],
    (dir) => Deno.writeTextFile(join(dir, "app.cfg"), "name = demo\nversion = 1\n"),
  );
  equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  equal(result.exitReason, "COMPLETED");
  equal(result.rounds, 4);
  equal(result.toolCalls, 3);
  equal(result.text, "Bumped the version to 2 and checked it.");
  ok(result.usage.inputTokens > 0 && result.usage.outputTokens > 0);
  equal(files.get("app.cfg"), "name = demo\nversion = 2\n");
  equal(requests.length, 4);
  // The key authenticates the request but never reaches a tool or any output.
  equal(requests[0].headers["authorization"], `Bearer ${SECRET}`);
  const lastMessages = JSON.stringify(requests[3].body.messages);
  ok(lastMessages.includes("version = 2"), "the command's output was fed back");
  assertNoSecret(lastMessages, run.stdout, run.stderr);
});

Deno.test("tern run streams the answer to stdout and one line per tool call to stderr", async () => {
  const { run } = await withTern(
    [call("list", {}, "c0"), { text: "The workspace has one file." }],
    ["describe the workspace"],
    (dir) => Deno.writeTextFile(join(dir, "a.txt"), "a"),
  );
  equal(run.code, 0, run.stderr);
  equal(run.stdout, "The workspace has one file.\n");
  ok(/• list .*✓/.test(run.stderr), run.stderr);
});

Deno.test("tern run --output stream-json prints one event per line", async () => {
  const { run } = await withTern([call("list", {}, "c0"), { text: "ok" }], [
    "-o",
    "stream-json",
    "x",
  ]);
  equal(run.code, 0, run.stderr);
  const events = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
  equal(events[0].type, "turn_start");
  equal(events.at(-1).type, "turn_end");
  equal(events.at(-1).exitReason, "COMPLETED");
  ok(events.some((e) => e.type === "tool_end" && e.observation.status === "SUCCEEDED"));
});

Deno.test("tern run exits with a distinct code for each exit reason", async () => {
  const loop = (_req: never, i: number) => call("list", {}, `c${i}`);
  const failing = (_req: never, i: number) => call("read", { path: "missing.txt" }, `c${i}`);
  const cases: [string, ScriptedReply[] | typeof loop, string[], number][] = [
    ["MAX_ROUNDS", loop, ["--max-rounds", "2"], 3],
    ["REPEATED_FAILURE", failing, [], 4],
    ["EMPTY_RESPONSE", [{ fault: "empty" }], [], 5],
    ["LENGTH_LIMIT", [{ text: "cut", finishReason: "length" }], [], 6],
    ["CLIENT_ERROR", [{ fault: "http500" }], [], 7],
  ];
  for (const [reason, script, extra, code] of cases) {
    const { run } = await withTern(script, ["-o", "json", ...extra, "task"]);
    equal(run.code, code, `${reason}: ${run.stderr}`);
    equal(JSON.parse(run.stdout).exitReason, reason);
  }
});

Deno.test("tern run reports a rejected key with the status and never the key", async () => {
  const { run } = await withTern([{ fault: "http401" }], ["task"]);
  equal(run.code, 7);
  ok(run.stderr.includes("401"), run.stderr);
  ok(run.stderr.includes("Incorrect API key provided"), run.stderr);
  assertNoSecret(run.stdout, run.stderr);
});

Deno.test("tern run rejects a bad project config with the file, line and exit code 2", async () => {
  const { run, requests } = await withTern([{ text: "never" }], ["task"], async (dir) => {
    await Deno.mkdir(join(dir, ".tern"));
    await Deno.writeTextFile(
      join(dir, ".tern/config.jsonc"),
      '{\n  "model": "x"\n  "maxRounds": 3\n}\n',
    );
  });
  equal(run.code, 2);
  ok(run.stderr.includes(".tern/config.jsonc"), run.stderr);
  ok(run.stderr.includes("line 3"), run.stderr);
  equal(requests.length, 0);
});

Deno.test("tern run refuses a TERN_HOME that is a file or under one with exit code 2", async () => {
  const server = await startScriptedServer([{ text: "never" }], { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  try {
    const file = join(ws.home, "afile");
    await Deno.writeTextFile(file, "not a folder\n");
    const cases: [string, string][] = [
      [file, "it is a file"],
      [join(file, "tern"), `"${file}" above it is a file`],
    ];
    for (const [ternHome, why] of cases) {
      const run = await runTern(["run", "--base-url", server.baseUrl, "-m", "scripted", "task"], {
        cwd: ws.dir,
        env: { TERN_HOME: ternHome, HOME: ws.home, TERN_API_KEY: SECRET },
      });
      equal(run.code, 2, run.stderr);
      ok(
        run.stderr.includes(`tern: TERN_HOME "${ternHome}" must be a folder: ${why}\n`),
        run.stderr,
      );
      ok(!run.stderr.includes("internal error"), run.stderr);
    }
    equal(server.requests.length, 0);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});

Deno.test("tern run without a key for api.openai.com says how to set one", async () => {
  const ws = await tempWorkspace();
  try {
    const run = await runTern(["run", "task"], {
      cwd: ws.dir,
      env: { TERN_HOME: ws.home, HOME: ws.home },
    });
    equal(run.code, 2);
    ok(run.stderr.includes("TERN_API_KEY"), run.stderr);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern rejects bad usage with exit code 2", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home };
    for (
      const args of [["run", " "], ["--nope"], ["run", "--max-rounds", "zero", "x"], [
        "run",
        "--cwd",
        "/nonexistent/dir",
        "x",
      ]]
    ) {
      const run = await runTern(args, { cwd: ws.dir, env });
      equal(run.code, 2, `${args.join(" ")}: ${run.stderr}`);
      ok(run.stderr.length > 0);
    }
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern --version and --help answer without a model", async () => {
  const ws = await tempWorkspace();
  try {
    const version = await runTern(["--version"], { cwd: ws.dir });
    equal(version.code, 0);
    ok(
      /^tern \d+\.\d+\.\d+ \(deno \d+\.\d+\.\d+, source\)\n$/.test(version.stdout),
      version.stdout,
    );
    const help = await runTern(["--help"], { cwd: ws.dir });
    equal(help.code, 0);
    const snapshot = new URL("./help.snapshot.txt", import.meta.url);
    if (Deno.env.get("UPDATE_SNAPSHOTS") === "1") await Deno.writeTextFile(snapshot, help.stdout);
    deepEqual(help.stdout, await Deno.readTextFile(snapshot));
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern run ends CANCELLED with exit code 130 on Ctrl-C (SIGINT)", async () => {
  const { promise: requested, resolve } = Promise.withResolvers<void>();
  const server = await startScriptedServer([{ fault: "hang" }], { onRequest: () => resolve() });
  const ws = await tempWorkspace();
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...declaredFlags({ HOME: ws.home, TERN_HOME: ws.home }, {
          args: ["--base-url", server.baseUrl],
        }),
        join(ROOT, "main.ts"),
        "run",
        "--base-url",
        server.baseUrl,
        "-o",
        "json",
        "wait forever",
      ],
      cwd: ws.dir,
      env: { PATH: Deno.env.get("PATH") ?? "", HOME: ws.home, TERN_HOME: ws.home },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    await requested;
    child.kill("SIGINT");
    const out = await child.output();
    equal(out.code, 130, new TextDecoder().decode(out.stderr));
    equal(JSON.parse(new TextDecoder().decode(out.stdout)).exitReason, "CANCELLED");
  } finally {
    await server.close();
    await ws.cleanup();
  }
});

Deno.test("tern run tells the model the bash timeout the configuration sets", async () => {
  const { run, requests } = await withTern(
    [{ text: "ok" }],
    ["-o", "json", "task"],
    async (dir) => {
      await Deno.mkdir(join(dir, ".tern"));
      await Deno.writeTextFile(join(dir, ".tern/config.jsonc"), `{ "bashTimeoutMs": 7000 }`);
    },
  );
  equal(run.code, 0, run.stderr);
  const tools = requests[0].body.tools as { function: { name: string; description: string } }[];
  const bash = tools.find((tool) => tool.function.name === "bash")!;
  ok(bash.function.description.includes("Timeout 7 s by default"), bash.function.description);
  ok(!JSON.stringify(requests[0].body).includes("default 120000"));
});
