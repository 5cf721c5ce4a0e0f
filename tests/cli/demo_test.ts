import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, runTernWithInput, tempWorkspace } from "../support/tern_process.ts";
import { PLAN_TASK, RESUME_TASK, TURN_TASK } from "../../src/cli/demo_script.ts";

/** The running processes whose command line names `path` (`ps`: /proc needs --allow-all). */
async function processesNaming(path: string): Promise<string[]> {
  const out = await new Deno.Command("ps", { args: ["-eo", "pid=,args="] }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((line) => line.includes(path));
}

async function names(dir: string): Promise<string[]> {
  return (await Array.fromAsync(Deno.readDir(dir))).map((entry) => entry.name).sort();
}

Deno.test("tern demo shows its tools, a parallel plan, a code search and a resumable session, offline, and keeps only what it names", async () => {
  const ws = await tempWorkspace();
  const tmp = join(ws.dir, "tmp");
  await Deno.mkdir(tmp);
  const server = await startScriptedServer(() => ({ text: "You built hello-demo." }), {
    chunkDelayMs: 0,
  });
  try {
    // No NO_COLOR: a pipe alone must keep colour codes out.
    const env = { HOME: ws.home, TMPDIR: tmp };
    const run = await runTern(["demo"], { cwd: ws.dir, env });
    equal(run.code, 0, run.stdout + run.stderr);
    const out = run.stdout;
    ok(!out.includes("\x1b["), "no colour codes in a pipe");
    for (const heading of ["INPUT", "PLAN", "TOOLS", "RESULT", "KEPT"]) {
      ok(out.includes(`\n${heading}\n`) || out.startsWith(`${heading}\n`), heading);
    }
    ok(out.includes("1. COMPLETED: 7 model calls, 6 tool calls"), out);
    ok(/• write src\/greet\.ts ✓/.test(out), out);
    // The sandboxed command's output, the refused escape with its reason, the edit's diff.
    ok(/• bash wc -l src\/greet\.ts ✓[^\n]*\n\s+SUCCEEDED\n\s+4 src\/greet\.ts\n/.test(out), out);
    ok(
      /• write \.\.\/escape\.txt ✗ ERROR\[POLICY_DENIED\] Path "\.\.\/escape\.txt" is outside the workspace/
        .test(out),
      out,
    );
    ok(out.includes("-  return `Hello, ${name}.`;\n"), out);
    ok(out.includes("+  return `Hello, ${name}! Welcome to tern.`;\n"), out);

    // The plan: farewell and shout both start before either ends; exports after both.
    const at = (node: string, state: string) => {
      const index = out.search(new RegExp(`\\+\\d+ ms +${node} +${state}`));
      ok(index !== -1, `${node} ${state}\n${out}`);
      return index;
    };
    const ends = Math.min(at("farewell", "SUCCEEDED"), at("shout", "SUCCEEDED"));
    ok(Math.max(at("farewell", "RUNNING"), at("shout", "RUNNING")) < ends, out);
    ok(at("exports", "RUNNING") > Math.max(at("farewell", "SUCCEEDED"), at("shout", "SUCCEEDED")));
    ok(/\+\d+ ms +farewell +• write src\/farewell\.ts ✓/.test(out), out);
    ok(/✓ exports +SUCCEEDED Export all from src\/mod\.ts ← farewell, shout/.test(out), out);
    ok(out.includes("farewell and shout ran at once"), out);

    // The code search over the project, with its hits.
    ok(/• code_search greeting farewell ✓/.test(out), out);
    ok(/src\/farewell\.ts:2-4 +FUNCTION farewell/.test(out), out);
    ok(/src\/greet\.ts:2-4 +FUNCTION greet/.test(out), out);
    ok(/code_search hits: .*src\/greet\.ts/.test(out), out);
    ok(/3\. the model got the \d+ earlier messages from the file; COMPLETED/.test(out), out);
    ok(out.includes("check: every file is as the tools wrote it"), out);

    // What it keeps, and nothing else: one folder in TMPDIR, no process left naming it.
    const kept = /\nKEPT\n {2}(\S+)\/\n/.exec(out)?.[1];
    ok(kept, out);
    equal(join(kept, ".."), tmp);
    equal((await names(tmp)).length, 1, "one folder kept in TMPDIR");
    equal((await names(kept)).join(","), "hello-demo,tern-home");
    equal((await names(join(kept, "hello-demo"))).join(","), "README.md,src");
    equal(
      (await names(join(kept, "hello-demo", "src"))).join(","),
      "farewell.ts,greet.ts,mod.ts,shout.ts",
    );
    equal((await processesNaming(kept)).join("\n"), "");

    // The printed commands work as printed: show loads the session offline…
    const show = /show it, offline:\n {4}TERN_HOME=(\S+) tern -C (\S+) (sessions show \S+)\n/.exec(
      out,
    );
    ok(show, out);
    const [, ternHome, project, showArgs] = show;
    equal(project, join(kept, "hello-demo"));
    equal(ternHome, join(kept, "tern-home"));
    const shown = await runTern(["-C", project, ...showArgs.split(" ")], {
      cwd: ws.dir,
      env: { HOME: ws.home, TERN_HOME: ternHome, NO_COLOR: "1" },
    });
    equal(shown.code, 0, shown.stderr);
    ok(shown.stdout.includes(RESUME_TASK), shown.stdout);
    // …and --resume continues it: the model gets the demo's whole conversation.
    // (with the model named: the session's own was the demo's script)
    const resume = /\n {4}TERN_HOME=\S+ tern -C \S+ (--resume \S+) --model <model>\n/.exec(out);
    ok(resume, out);
    const resumed = await runTernWithInput(
      ["-C", project, ...resume[1].split(" "), "--model", "scripted", "--base-url", server.baseUrl],
      "What did you do?\n",
      {
        cwd: ws.dir,
        env: { HOME: ws.home, TERN_HOME: ternHome, TERN_API_KEY: "sk-test", NO_COLOR: "1" },
      },
    );
    equal(resumed.code, 0, resumed.stderr);
    equal(server.requests.length, 1, resumed.stderr);
    const sent = server.requests[0].modelRequest.messages.map((m) => m.content).join("\n");
    for (const said of [TURN_TASK, PLAN_TASK, RESUME_TASK, "What did you do?"]) {
      ok(sent.includes(said), said);
    }
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
