/**
 * `tern demo`: the production loop, registry, tools, sandbox, planner, code index and session
 * store against a built-in scripted model, on a small project it creates. No key, no network.
 * It keeps one folder (the project and its tern directory, so the session can be resumed) and
 * says where; everything else it starts or makes is gone when it returns.
 */
import { guardHostPrograms } from "../core/host_programs.ts";
import { currentDir } from "./current_dir.ts";
import { join } from "../core/path.ts";
import { EXIT_CANCELLED, exitCodeFor } from "./exit_codes.ts";
import { ScriptedProvider } from "../llm/scripted.ts";
import { openRunSession } from "../harness/run_session.ts";
import type { TurnConfig } from "../harness/models.ts";
import { Session } from "../session/session.ts";
import { VERSION } from "../version.ts";
import { colorWanted, processWriters } from "./process_env.ts";
import { openTaskConversation } from "./run.ts";
import { themeFor } from "../tui/theme.ts";
import { DEFAULTS } from "../config/mod.ts";
import { unifiedDiff } from "../tools/file_diff.ts";
import { runDemoPlan } from "./demo_plan.ts";
import {
  demoScript,
  EXPECTED_FILES,
  GREETING_SOURCE,
  PLAN_NODES,
  PLAN_TASK,
  RESUME_TASK,
  type ScriptWitness,
  SEARCH_QUERY,
  TURN_STEPS,
  TURN_TASK,
} from "./demo_script.ts";
import { checkKept, keptLines } from "./demo_kept.ts";

/** Runs the demo and returns its exit code: 0 only when every check of what it made passed. */
export async function runDemo(): Promise<number> {
  // The folder it is started in is a workspace too: no program it starts comes from there.
  guardHostPrograms([Deno.realPathSync(currentDir())]);
  const terminal = Deno.stdout.isTerminal();
  const style = themeFor(colorWanted(terminal));
  const kept = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-demo-" }));
  const workspace = join(kept, "hello-demo");
  const ternHome = join(kept, "tern-home");
  const { out } = processWriters();
  const print = (text: string) => out(`${text}\n`);
  const indent = (text: string, by: string) =>
    text.trimEnd().split("\n").map((line) => `${by}${line}`).join("\n");
  const controller = new AbortController();
  const onInterrupt = () => controller.abort();
  Deno.addSignalListener("SIGINT", onInterrupt);
  let keep = false;
  // The code index's modules load while the first turn waits for its tool worker to start, so
  // the resumed turn's search pays only for the indexing; what runs is the same.
  const preloading = Promise.all([
    import("../harness/code_index_live.ts"),
    import("../harness/code_index.ts"),
  ]).catch(() => {});
  try {
    await Deno.mkdir(workspace);
    await Deno.mkdir(ternHome);
    await Deno.writeTextFile(
      join(workspace, "README.md"),
      "# hello-demo\n\nA tiny project for the tern demo.\n",
    );
    const outside = join(kept, "escape.txt");
    print(style.bold("INPUT"));
    print(`  project: ${workspace} (new)`);
    print(`  three messages, the last in the session resumed from its file:`);
    print(`    1. ${TURN_TASK}`);
    print(`    2. (a plan) ${PLAN_TASK}`);
    print(`    3. (resumed) ${RESUME_TASK}\n`);
    print(style.bold("PLAN"));
    print("  1. one tool call at a time:");
    print(TURN_STEPS.map((step, i) => `     ${i + 1}. ${step}`).join("\n"));
    print("  2. a graph of steps, each its own agent; ready steps run at once:");
    for (const node of PLAN_NODES) {
      const after = node.dependsOn.length > 0 ? `, after ${node.dependsOn.join(" and ")}` : "";
      print(`     ${node.id}: ${node.title}${after}`);
    }
    print("  3. close the session, reopen it from its file as --resume does, search the code");
    print("     (code_search)\n");
    print(style.bold("TOOLS"));
    const witness: ScriptWitness = {};
    const provider = new ScriptedProvider(
      demoScript(witness, (output) => print(indent(output, "      "))),
    );
    const config = demoConfig(ternHome);
    // Tool lines go to stdout here, indented (deeper while the plan's timeline is drawn).
    let margin = "  ";
    const write = { out: () => {}, err: (text: string) => out(`${margin}${text}`) };
    // 1 and 2: one conversation in a new session.
    let session = await Session.create(ternHome, { cwd: workspace, ternVersion: VERSION });
    let conversation = await openTaskConversation({
      workspace,
      config,
      provider,
      session,
      write,
      terminal,
    });
    let turn;
    let plan;
    try {
      print(style.dim("  1. the first message"));
      turn = await conversation.turn(TURN_TASK, { signal: controller.signal });
      // ^C ends the demo where it is: the next steps are neither shown nor started.
      if (controller.signal.aborted) return EXIT_CANCELLED;
      print(style.dim("  2. the plan"));
      margin = "    ";
      plan = await runDemoPlan(conversation, PLAN_TASK, {
        print,
        style,
        terminal,
        signal: controller.signal,
      });
    } finally {
      await conversation.close();
      session.close();
    }
    if (controller.signal.aborted) return EXIT_CANCELLED;
    // 3: the session reopened from its file by its short id, as `tern --resume <id>` does.
    const sessionId = session.id.slice(0, 8);
    print(style.dim(`  3. session ${sessionId} resumed from its file`));
    margin = "  ";
    session = await openRunSession({ resume: sessionId }, { ternHome, workspace });
    conversation = await openTaskConversation({
      workspace,
      // Review was bypassed for the script's own calls; the session it keeps resumes asking
      // before each change (tern's default), since a resumed session brings its mode back.
      // The search only reads: nothing is asked.
      config: { ...config, mode: "ask" },
      provider,
      session,
      write,
      terminal,
    });
    let resumed;
    try {
      resumed = await conversation.turn(RESUME_TASK, { signal: controller.signal });
    } finally {
      await conversation.close();
      session.close();
    }
    if (controller.signal.aborted) return EXIT_CANCELLED;
    keep = true;

    // What the tools did, checked on disk: a run whose tools failed is no success.
    const problems: string[] = [];
    for (const [path, wanted] of Object.entries(EXPECTED_FILES)) {
      const text = await Deno.readTextFile(join(workspace, path)).catch(() => "(missing)");
      if (text !== wanted) problems.push(`${path} is not as the tools wrote it`);
    }
    if (await Deno.stat(outside).then(() => true, () => false)) {
      problems.push("../escape.txt was written outside the workspace");
    }
    const turns = [["the first message", turn], ["the resumed one", resumed]] as const;
    for (const [what, result] of turns) {
      if (result.exitReason !== "COMPLETED") {
        problems.push(
          `${what} ended ${result.exitReason}${result.error ? `: ${result.error}` : ""}`,
        );
      }
    }
    problems.push(...plan.problems);
    if (witness.dependentInputs !== true) {
      problems.push("the exports step did not get the results of farewell and shout");
    }
    const hits = searchHits(witness.searchOutput ?? "");
    if (!hits.includes("src/greet.ts") || !hits.includes("src/farewell.ts")) {
      problems.push(
        `code_search for "${SEARCH_QUERY}" did not find src/greet.ts and src/farewell.ts`,
      );
    }
    if (witness.resumedHistory !== true) {
      problems.push("the resumed session did not bring back the first message and the plan");
    }
    const session3 = await checkKept({ ternHome, workspace, sessionPath: session.path });
    problems.push(...session3.problems);

    print(`\n${style.bold("RESULT")}`);
    print(
      `  1. ${turn.exitReason}: ${turn.rounds} model calls, ${turn.toolCalls} tool calls; ` +
        `${turn.text}`,
    );
    print("     the edit, as a diff of src/greet.ts:");
    print(
      indent(
        unifiedDiff(
          "src/greet.ts",
          GREETING_SOURCE,
          await Deno.readTextFile(join(workspace, "src/greet.ts")).catch(() => ""),
        ),
        "       ",
      ),
    );
    print(`  2. ${plan.facts.join("; ") || "the plan's timeline is not as planned"}`);
    print(
      `  3. the model got the ${witness.resumedMessages ?? 0} earlier messages from the file; ` +
        `${resumed.exitReason}: ${resumed.text}`,
    );
    print(`     code_search hits: ${hits.join(", ") || "none"}`);
    if (problems.length > 0) {
      print(`  check FAILED: ${problems.join("; ")}`);
    } else {
      print(
        "  check: every file is as the tools wrote it, nothing was written outside the " +
          "project, the plan ran as drawn, the search found the code, the session resumed " +
          `(${session3.entries} entries in its file)`,
      );
    }
    print(`\n${style.bold("KEPT")}`);
    for (const text of keptLines({ kept, workspace, ternHome, sessionId })) print(`  ${text}`);
    if (problems.length > 0) return 1;
    return exitCodeFor(turn.exitReason);
  } finally {
    Deno.removeSignalListener("SIGINT", onInterrupt);
    await preloading;
    if (!keep) await Deno.remove(kept, { recursive: true }).catch(() => {});
  }
}

/** The `path:lines` of each hit in code_search's answer, without repeats. */
function searchHits(output: string): string[] {
  return [...new Set(output.match(/^src\/\S+?\.ts(?=:)/gm) ?? [])];
}

/**
 * The real sandbox (worker + bubblewrap, profile :workspace); review is bypassed because the
 * demo's script is fixed; sessions, the audit log and the code index go to the demo's own tern
 * directory.
 */
function demoConfig(ternHome: string): TurnConfig {
  return {
    model: "tern-demo-script",
    maxRounds: 10,
    bashTimeoutMs: 10_000,
    profile: ":workspace",
    profiles: {},
    mode: "bypass",
    noSandbox: false,
    rules: [],
    ternHome,
    reviewTimeoutMs: 10_000,
    contextWindow: DEFAULTS.contextWindow,
    compactAt: DEFAULTS.compactAt,
    toolResultChars: DEFAULTS.toolResultChars,
    thinking: DEFAULTS.thinking,
  };
}
