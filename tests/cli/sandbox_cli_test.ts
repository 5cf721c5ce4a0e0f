/**
 * End-to-end: `tern run` with the sandbox on by default, review modes against the scripted
 * model server, and `tern sandbox explain|check`, `tern audit` — the real `tern` process.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { basename, join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

const SECRET = "sk-test-SANDBOX-9d8c7b6a5f";

function call(name: string, args: unknown, id: string): ScriptedReply {
  return { toolCalls: [{ id, name, arguments: JSON.stringify(args) }] };
}

type Script = (request: ModelRequest, index: number) => ScriptedReply;

async function withWorkspace(
  fn: (ws: { dir: string; home: string; env: Record<string, string> }) => Promise<void>,
) {
  const ws = await tempWorkspace();
  try {
    await fn({ ...ws, env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: SECRET } });
  } finally {
    await ws.cleanup();
  }
}

async function runWith(
  script: Script,
  args: string[],
  ws: { dir: string; env: Record<string, string> },
) {
  const server = await startScriptedServer(script as unknown as ScriptedReply[], {
    chunkDelayMs: 0,
  });
  try {
    const run = await runTern(
      ["run", "--base-url", server.baseUrl, "-m", "scripted", "-o", "json", ...args],
      { cwd: ws.dir, env: ws.env },
    );
    return { run, requests: server.requests };
  } finally {
    await server.close();
  }
}

function toolResult(request: ModelRequest): string {
  const last = request.messages.at(-1);
  return last?.role === "tool" ? last.content : "";
}

Deno.test("tern run in ask mode without a terminal denies a write and tells the model how to allow it", async () => {
  await withWorkspace(async (ws) => {
    const seen: string[] = [];
    const script: Script = (request, i) => {
      if (i === 0) return call("write", { path: "new.txt", content: "x" }, "w1");
      seen.push(toolResult(request));
      return { text: "Could not write." };
    };
    const { run } = await runWith(script, ["write a file"], ws);
    equal(run.code, 0, run.stderr);
    match(seen[0], /^ERROR\[POLICY_DENIED\]: Not approved: this run is not interactive/);
    match(seen[0], /--mode auto or --mode bypass/);
    await Deno.stat(join(ws.dir, "new.txt")).then(
      () => ok(false, "the write happened"),
      (error) => ok(error instanceof Deno.errors.NotFound),
    );
    ok(!run.stdout.includes(SECRET) && !run.stderr.includes(SECRET));
  });
});

Deno.test("tern run --mode auto asks the reviewer model: allow runs the call, deny refuses it", async () => {
  await withWorkspace(async (ws) => {
    const reviews: ModelRequest[] = [];
    const seen: string[] = [];
    let agentRound = 0;
    const script: Script = (request) => {
      if (request.tools.length === 0) {
        reviews.push(request);
        const text = JSON.stringify(request.messages);
        return {
          text: text.includes("curl")
            ? '{"decision":"deny","reason":"the goal needs no network"}'
            : '{"decision":"allow","reason":"writing notes fits the goal"}',
        };
      }
      agentRound++;
      if (agentRound > 1) seen.push(toolResult(request));
      if (agentRound === 1) return call("write", { path: "notes.txt", content: "n\n" }, "a1");
      if (agentRound === 2) return call("bash", { command: "curl -s http://example.com" }, "a2");
      return { text: "done" };
    };
    const { run } = await runWith(script, ["--mode", "auto", "write notes"], ws);
    equal(run.code, 0, run.stderr);
    equal(await Deno.readTextFile(join(ws.dir, "notes.txt")), "n\n");
    match(seen[0], /^SUCCEEDED/);
    match(seen[1], /^ERROR\[POLICY_DENIED\]: Reviewer: the goal needs no network/);
    equal(reviews.length, 2);
    const first = JSON.stringify(reviews[0].messages);
    ok(first.includes("write notes") && first.includes("notes.txt"), first);
    ok(!first.includes(SECRET));
  });
});

testWith(
  [bwrapNeed],
  "tern sandbox explain prints exactly the worker and bubblewrap command lines a run starts",
  async () => {
    await withWorkspace(async (ws) => {
      let workerArgv: string[] | undefined;
      let warmArgv: string[] | undefined;
      let listResult = "";
      const seen: string[] = [];
      const script: Script = (request, i) => {
        if (i === 0) return call("list", { path: "." }, "e0");
        if (i === 1) {
          workerArgv = findWorker(ws.dir);
          listResult = toolResult(request);
          return call("bash", { command: "tr '\\0' '\\n' < /proc/1/cmdline" }, "e1");
        }
        // The command has ended: its warm shell waits for the next one.
        warmArgv = findProcess((argv) =>
          basename(argv[0] ?? "") === "bwrap" && argv.includes("/run/.tern-shell") &&
          argv.some((arg) => arg.includes(ws.dir))
        );
        seen.push(toolResult(request));
        return { text: "seen" };
      };
      const { run } = await runWith(script, ["--mode", "bypass", "look"], ws);
      equal(run.code, 0, run.stdout + run.stderr);
      const explain = await runTern(["sandbox", "explain", "-o", "json"], {
        cwd: ws.dir,
        env: ws.env,
      });
      equal(explain.code, 0, explain.stderr);
      const explained = JSON.parse(explain.stdout);
      const normal = (argv: string[]) =>
        argv.map((arg) =>
          arg.replace(/\/tmp\/tern-tmp-\w+/g, "<tmp>").replace(/tern-tmp-\w+/g, "<run>")
            .replace(
              /\/sessions\/[^,/]+\/[^,/]+\/tool-results/g,
              "/sessions/<cwd>/<session>/tool-results",
            )
            .replace(/deno-[\w-]+-worker-\d+\.jsonl/g, "deno-<run>-worker-<n>.jsonl")
        );
      ok(workerArgv, `no worker process was found during the run; list said: ${listResult}`);
      // The program as found on PATH (bubblewrap's) or as given (deno's): the same file.
      // The warm shell's guard mount points (empty .tern/.git folders) exist while it lives: a
      // worker started then also binds them read-only (the same empty folder either way).
      const guards = [join(ws.dir, ".tern"), join(ws.dir, ".git")];
      const unguarded = (argv: string[]) =>
        argv.filter((arg, i) =>
          !(guards.includes(arg) && (argv[i - 1] === "--ro-bind" || argv[i - 2] === "--ro-bind")) &&
          !(arg === "--ro-bind" && guards.includes(argv[i + 1]))
        );
      const [program, ...args] = normal(unguarded(workerArgv));
      // As root the worker's bubblewrap is started by a bash that joins the run's cgroups first
      // (bash -c <join> tern-worker bwrap ...) and execs it.
      const shown: string[] = basename(explained.worker[0]) === "bash"
        ? explained.worker.slice(explained.worker.indexOf("tern-worker") + 1)
        : explained.worker;
      equal(basename(program), basename(shown[0]));
      deepEqual(args, normal(unguarded(shown.slice(1))));
      // The command ran in the warm shell: bubblewrap's argv on the host is what explain says
      // (the launcher, bash -c <launcher> tern-sandbox <filter> bwrap ..., execs it), and inside
      // pid 1 is its server.
      ok(warmArgv, "no warm shell was found after the command");
      equal(basename(explained.warmBwrap[0]), "bash");
      const at = explained.warmBwrap.findIndex((arg: string) => basename(arg) === "bwrap");
      ok(at > 0, explained.warmBwrap.join(" "));
      // (Read from /proc with NULs as newlines: the server's script spans lines; compare joined.)
      // Its plan may also have been made while a guard's mount point existed (the worker's or
      // its own): the same empty read-only folder, as for the worker.
      equal(
        normal(unguarded(warmArgv.slice(1))).join("\n"),
        normal(unguarded(explained.warmBwrap.slice(at + 1))).join("\n"),
      );
      const real = seen[0].replace(/^SUCCEEDED\n/, "").split("\n");
      deepEqual(real.slice(0, 2), explained.warmBwrap.slice(-3, -1));
      // A one-shot sandbox (commands side by side) starts the same view.
      const oneShot = explained.bwrap.slice(
        explained.bwrap.findIndex((arg: string) => basename(arg) === "bwrap") + 1,
        explained.bwrap.lastIndexOf("--chdir"),
      );
      const warmView = unguarded(warmArgv.slice(1));
      deepEqual(normal(unguarded(oneShot)), normal(warmView.slice(0, unguarded(oneShot).length)));
      ok(explained.layers.seccomp.refused.includes("socket(AF_UNIX)"));
      equal(explained.profile, ":workspace");
    });
  },
);

/**
 * The argv of the tool worker for workspace `dir`, from /proc (through `cat`: reading another
 * process's /proc entries needs --allow-all in Deno).
 */
function findWorker(dir: string): string[] | undefined {
  // A busy machine can hide a process from one scan (its cmdline reads empty while it is being
  // scheduled); look a few times before giving up.
  for (let attempt = 0; attempt < 5; attempt++) {
    const argv = scanForWorker(dir);
    if (argv) return argv;
  }
  return undefined;
}

/** The argv of a live process `match` accepts, from /proc (looked at a few times). */
function findProcess(match: (argv: string[]) => boolean): string[] | undefined {
  for (let attempt = 0; attempt < 5; attempt++) {
    const found = processArgvs().find(match);
    if (found) return found;
  }
  return undefined;
}

function processArgvs(): string[][] {
  const script = 'for f in /proc/[0-9]*/cmdline; do tr "\\0" "\\n" < "$f"; echo "<end>"; done';
  const out = new Deno.Command("bash", { args: ["-c", script], stderr: "null" }).outputSync();
  return new TextDecoder().decode(out.stdout).split("<end>\n")
    .map((text) => text.split("\n").slice(0, -1));
}

function scanForWorker(dir: string): string[] | undefined {
  const script = 'for f in /proc/[0-9]*/cmdline; do tr "\\0" "\\n" < "$f"; echo "<end>"; done';
  const out = new Deno.Command("bash", { args: ["-c", script], stderr: "null" }).outputSync();
  const all = new TextDecoder().decode(out.stdout).split("<end>\n");
  // In bubblewrap the worker shows twice: bubblewrap's argv holds deno's; the longer is started.
  let found: string[] | undefined;
  for (const text of all) {
    const argv = text.split("\n").slice(0, -1);
    const matches = argv.some((arg) => arg.startsWith("--allow-read=") && arg.includes(dir));
    if (matches && argv.length > (found?.length ?? 0)) found = argv;
  }
  return found;
}

Deno.test("tern audit prints the calls of the last run with their decisions", async () => {
  await withWorkspace(async (ws) => {
    await Deno.writeTextFile(join(ws.dir, "a.txt"), "a\n");
    const script: Script = (_request, i) => {
      if (i === 0) return call("read", { path: "a.txt" }, "r1");
      if (i === 1) return call("write", { path: "b.txt", content: "b" }, "r2");
      return { text: "ok" };
    };
    const { run } = await runWith(script, ["read and write"], ws);
    equal(run.code, 0, run.stderr);
    const auditFile = JSON.parse(run.stdout).audit as string;
    ok(auditFile.startsWith(join(ws.home, "audit")), auditFile);
    const audit = await runTern(["audit"], { cwd: ws.dir, env: ws.env });
    equal(audit.code, 0, audit.stderr);
    match(audit.stdout, /read .*allow by classifier/);
    match(audit.stdout, /write .*deny by policy/);
    const json = await runTern(["audit", "--json"], { cwd: ws.dir, env: ws.env });
    const records = json.stdout.trim().split("\n").map((line) => JSON.parse(line));
    deepEqual(records.map((r) => [r.tool, r.decision, r.sandbox]), [
      ["read", "allow", "worker"],
      ["write", "deny", "none"],
    ]);
  });
});

testWith(
  [bwrapNeed],
  "tern sandbox check reports rules, the classifier and the profile",
  async () => {
    await withWorkspace(async (ws) => {
      await Deno.writeTextFile(
        join(ws.home, "config.jsonc"),
        `{ "rules": [{ "action": "deny", "command": "git push", "match": ["git push origin"] }] }`,
      );
      const check = (args: string[], extra: string[] = []) =>
        runTern(["sandbox", "check", ...extra, "--", ...args], { cwd: ws.dir, env: ws.env });
      let out = await check(["git", "status", "&&", "git", "push"]);
      equal(out.code, 0, out.stderr);
      match(out.stdout, /^deny\n\s+decided by\s+rule \(deny command "git push"\)/);
      out = await check(["rg", "-n", "TODO", "src"]);
      match(out.stdout, /^run in bubblewrap\n\s+decided by\s+classifier/);
      out = await check(['{"tool":"edit","args":{"path":"a.ts"}}'], ["--profile", ":read-only"]);
      match(out.stdout, /^deny\n\s+decided by\s+profile/);
      out = await check(["rm", "-rf", "build"], ["--mode", "bypass"]);
      match(out.stdout, /^run in bubblewrap \(review bypassed\)/);
    });
  },
);

Deno.test("tern sandbox check says what the file tools refuse: a protected folder, a path outside, bad args", async () => {
  await withWorkspace(async (ws) => {
    const check = (call: string) =>
      runTern(["sandbox", "check", "--mode", "bypass", "--", call], { cwd: ws.dir, env: ws.env });
    const write = (path: string) =>
      check(JSON.stringify({ tool: "write", args: { path, content: "{}" } }));
    let out = await write(".tern/config.jsonc");
    equal(out.code, 0, out.stderr);
    match(out.stdout, /^deny\n\s+decided by\s+tool\n\s+reason\s+write refuses it: .*protected/);
    out = await write(".git/hooks/pre-commit");
    match(out.stdout, /^deny\n[^]*protected/);
    out = await write("/etc/tern-check.txt");
    match(out.stdout, /^deny\n[^]*outside/);
    out = await check(JSON.stringify({ tool: "read", args: { path: "/etc/hostname" } }));
    match(out.stdout, /^deny\n/);
    out = await write("notes.txt");
    match(out.stdout, /^run in the confined tool worker \(review bypassed\)/);
    out = await check('{"tool":"write","args":5}');
    equal(out.code, 2);
    match(out.stderr, /"args" must be an object/);
  });
});

Deno.test("tern sandbox check applies a deny rule written as an absolute path, as a run does", async () => {
  await withWorkspace(async (ws) => {
    await Deno.writeTextFile(
      join(ws.home, "config.jsonc"),
      JSON.stringify({ rules: [{ action: "deny", path: `${ws.dir}/secrets` }] }),
    );
    const read = (path: string) =>
      runTern(
        [
          "sandbox",
          "check",
          "--mode",
          "bypass",
          "--",
          JSON.stringify({ tool: "read", args: { path } }),
        ],
        { cwd: ws.dir, env: ws.env },
      );
    let out = await read("secrets/key.txt");
    equal(out.code, 0, out.stderr);
    match(out.stdout, /^deny\n\s+decided by\s+rule/);
    out = await read("notes.txt");
    match(out.stdout, /^run in the confined tool worker\n\s+decided by\s+classifier/);
  });
});

Deno.test("tern refuses an unknown profile and a bad rule example with exit code 2", async () => {
  await withWorkspace(async (ws) => {
    let out = await runTern(["sandbox", "explain", "--profile", ":nope"], {
      cwd: ws.dir,
      env: ws.env,
    });
    equal(out.code, 2);
    match(out.stderr, /Unknown sandbox profile ":nope": expected one of ":read-only"/);
    await Deno.writeTextFile(
      join(ws.home, "config.jsonc"),
      `{ "rules": [{ "action": "allow", "command": "npm test", "notMatch": ["npm test"] }] }`,
    );
    out = await runTern(["sandbox", "check", "--", "ls"], { cwd: ws.dir, env: ws.env });
    equal(out.code, 2);
    match(
      out.stderr,
      /Invalid permission rule 1 \(allow command "npm test"\): example "npm test" should not match/,
    );
  });
});

testWith(
  [bwrapNeed],
  "tern sandbox explain names the network, guard, process and limit layers",
  async () => {
    await withWorkspace(async (ws) => {
      let out = await runTern(["sandbox", "explain"], { cwd: ws.dir, env: ws.env });
      equal(out.code, 0, out.stderr);
      match(out.stdout, /^ {2}network {5}none: a network namespace of its own, loopback only$/m);
      match(out.stdout, /^ {2}guards {6}\d+ \.git folder\(s\) read-only; \.tern and \.git cannot/m);
      match(out.stdout, /^ {2}processes {3}each command in a process group and pid namespace/m);
      match(out.stdout, /^ {2}limits {6}the limits above: rlimits/m);
      // The warm shell's own line: the same view, its server as pid 1.
      match(
        out.stdout,
        /one kept sandbox \(the warm shell\), started as:\n {2}bash -c .*--as-pid-1/,
      );
      match(out.stdout, /--ro-bind \S*shell-server \/run\/\.tern-shell/);
      // A profile granting one host: commands reach it through the proxy, nothing else.
      await Deno.writeTextFile(
        join(ws.home, "config.jsonc"),
        `{ "profile": "onehost", "profiles": { "onehost": { "write": ["."], "net": ["example.com"] } } }`,
      );
      out = await runTern(["sandbox", "explain", "-o", "json"], { cwd: ws.dir, env: ws.env });
      equal(out.code, 0, out.stderr);
      deepEqual(JSON.parse(out.stdout).layers.network, { kind: "hosts", hosts: ["example.com"] });
      // Commands with host grants get a proxy each: no warm shell.
      equal(JSON.parse(out.stdout).warmBwrap, null);
    });
  },
);
