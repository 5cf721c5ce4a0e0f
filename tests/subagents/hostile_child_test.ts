/**
 * The parent's side of a child that writes anything on its pipes (a `tern child` that is not
 * tern's): the parent's real `ChildProcess`, run by a driver beside a `bin/tern` that is the
 * hostile peer, so the launcher the parent finds above its main module is that script.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ChildRequest } from "../../src/harness/subagents/protocol.ts";
import { childRequest } from "./_helpers.ts";
import { ROOT } from "../support/tern_process.ts";

const REQUEST: ChildRequest = childRequest({ parentMode: "ask", autoNetwork: "person" });

/** Runs the parent's ChildProcess against the child script; the person answers "once" after `answerMs`. */
const DRIVER = `
import { ChildProcess } from ${
  JSON.stringify(pathToFileURL(join(ROOT, "src/harness/subagents/child_process.ts")).href)
};
const [request, answerMs, stopFirst] = Deno.args;
const asked = [];
let open = 0, most = 0;
const start = Date.now();
const child = new ChildProcess({
  request: JSON.parse(request),
  timeoutMs: 60_000,
  escalate: async (review, signal) => {
    asked.push(review.summary);
    most = Math.max(most, ++open);
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, Number(answerMs));
      signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); });
    });
    open--;
    // The session narrows (the child is stopped) as the person answers.
    if (stopFirst === "stop") child.stop();
    return "once";
  },
  onEnd: (outcome) => {
    console.log(JSON.stringify({ outcome, asked, most, ms: Date.now() - start }));
    Deno.exit(0);
  },
});
`;

/** What the escalate script function writes: one escalation line of id $1, summary $2. */
const ESCALATE = `esc() { printf '{"type":"escalation","version":1,"runId":"run-1",` +
  `"escalationId":"%s","request":{"tool":"bash","args":{},"summary":"%s","reason":"r",` +
  `"profile":":workspace","rememberable":false}}\\n' "$1" "$2"; }
final() { printf '{"type":"final","version":1,"taskName":"scan","agentId":"agent-1",` +
  `"childSessionId":"${REQUEST.childSessionId}","runId":"run-1","status":"completed",` +
  `"content":"done","finalEntryId":null}\\n'; }
`;

interface Driven {
  outcome: { kind: string; status?: string; error?: string };
  asked: string[];
  most: number;
  ms: number;
}

/** Runs `script` (bash, after the request line is read) as the child; `dir` is its folder. */
async function drive(
  script: (dir: string) => string,
  answerMs: number,
  stopFirst = false,
): Promise<Driven & { dir: string }> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-hostile-child-" }));
  await Deno.mkdir(join(dir, "bin"));
  await Deno.writeTextFile(
    join(dir, "bin", "tern"),
    `#!/bin/bash\n${ESCALATE}read -r request\n${script(dir)}\n`,
    { mode: 0o755 },
  );
  await Deno.writeTextFile(join(dir, "driver.js"), DRIVER);
  try {
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-check",
        "--no-prompt",
        "--config",
        join(ROOT, "deno.json"),
        "--allow-all",
        join(dir, "driver.js"),
        JSON.stringify(REQUEST),
        String(answerMs),
        stopFirst ? "stop" : "",
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(40_000),
    }).output();
    const text = new TextDecoder().decode(output.stdout).trim();
    ok(
      text !== "",
      `the driver ended without an outcome: ${new TextDecoder().decode(output.stderr)}`,
    );
    return { ...JSON.parse(text), dir };
  } catch (error) {
    // No outcome: what the child left goes now.
    await killPidIn(join(dir, "orphan.pid"));
    await Deno.remove(dir, { recursive: true });
    throw error;
  }
}

async function killPidIn(file: string): Promise<void> {
  try {
    Deno.kill(Number((await Deno.readTextFile(file)).trim()), "SIGKILL");
  } catch {
    // Gone already.
  }
}

Deno.test("ChildProcess ends a run whose child exited while a process it left holds its pipes", async () => {
  // The leftover process keeps the child's stdout and stderr open for a minute.
  const run = await drive((dir) => `sleep 60 & echo $! > ${dir}/orphan.pid\nexit 0`, 0);
  try {
    equal(run.outcome.kind, "lost");
    equal(run.outcome.status, "failed");
    ok(
      run.outcome.error?.startsWith("the child exited (code 0) without a final record"),
      run.outcome.error,
    );
    ok(run.ms < 15_000, `the outcome came after ${run.ms} ms`);
  } finally {
    await killPidIn(join(run.dir, "orphan.pid"));
    await Deno.remove(run.dir, { recursive: true });
  }
});

Deno.test("ChildProcess asks the person one escalation at a time, once per id, none after the final", async () => {
  const run = await drive(
    (dir) =>
      `esc e1 first; esc e1 again; esc e2 second
for i in 1 2; do read -r -t 20 answer; echo "$answer" >> ${dir}/answers; done
final; esc e3 late; sleep 1`,
    300,
  );
  try {
    equal(run.outcome.kind, "final");
    deepEqual(run.asked, ["first", "second"]);
    equal(run.most, 1, "two questions were open at once");
    const answers = (await Deno.readTextFile(join(run.dir, "answers"))).trim().split("\n")
      .map((line) => JSON.parse(line));
    deepEqual(answers.map((line) => [line.escalationId, line.answer]), [["e1", "once"], [
      "e2",
      "once",
    ]]);
  } finally {
    await Deno.remove(run.dir, { recursive: true });
  }
});

Deno.test("ChildProcess denies a flood of escalations unasked: the person sees one", async () => {
  // A hundred at once; the person answers none, so each waits out its 1 s.
  const run = await drive(
    (dir) =>
      `for i in $(seq 1 100); do esc e$i s$i; done
while read -r -t 4 answer; do echo "$answer" >> ${dir}/answers; done
final`,
    60_000,
  );
  try {
    equal(run.outcome.kind, "final");
    deepEqual(run.asked, ["s1"]);
    const answers = (await Deno.readTextFile(join(run.dir, "answers"))).trim().split("\n")
      .map((line) => JSON.parse(line));
    equal(answers.length, 100, "every escalation is answered");
    ok(answers.every((line) => line.answer === "deny"));
  } finally {
    await Deno.remove(run.dir, { recursive: true });
  }
});

Deno.test("ChildProcess answers a stopped child's escalation with a denial, whatever the person said", async () => {
  // The child ignores SIGTERM for a while (it ends its turn), reading its answer meanwhile.
  const run = await drive(
    (dir) =>
      `trap '' TERM; esc e1 first; read -r -t 20 answer; echo "$answer" > ${dir}/answers; final`,
    200,
    true,
  );
  try {
    deepEqual(run.asked, ["first"]);
    const answer = JSON.parse(await Deno.readTextFile(join(run.dir, "answers")));
    equal(answer.answer, "deny");
  } finally {
    await Deno.remove(run.dir, { recursive: true });
  }
});

Deno.test("ChildProcess fails a child whose escalation names another run, asking nobody", async () => {
  const run = await drive(() => `esc e1 first | sed 's/run-1/run-9/'; read -r -t 20 answer`, 0);
  try {
    equal(run.outcome.kind, "lost");
    equal(run.outcome.status, "failed");
    ok(run.outcome.error?.includes('names run "run-9", not its own'), run.outcome.error);
    deepEqual(run.asked, []);
  } finally {
    await Deno.remove(run.dir, { recursive: true });
  }
});
