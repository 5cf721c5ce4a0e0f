/**
 * `tern demo`: the production loop, registry and tools against a built-in scripted model, in a
 * temporary workspace that is removed afterwards. No key, no network.
 */
import type { ModelRequest } from "../llm/types.ts";
import { ScriptedProvider, type ScriptedReply } from "../llm/scripted.ts";
import { exitCodeFor } from "./exit_codes.ts";
import { processWriters, readEnv } from "./process_env.ts";
import { runTaskWith } from "./run.ts";
import { themeFor, wantsColor } from "../tui/theme.ts";
import { DEFAULTS } from "../config/mod.ts";
import { unifiedDiff } from "../tools/file_io.ts";

const TASK = "Look around this project, add src/greet.ts exporting greet(name), count its " +
  "lines with a command, try to leave a note outside the project, make the greeting friendlier " +
  "and check the file by reading it back.";

/** The steps the scripted model takes, printed under PLAN (one per tool call of demoScript). */
const PLAN = [
  "list the project (list)",
  "create src/greet.ts (write)",
  "count its lines with a sandboxed command (bash: wc -l)",
  "write ../escape.txt, outside the workspace: the sandbox must refuse it (write)",
  "edit the greeting, shown as a diff (edit)",
  "read src/greet.ts back and check it (read)",
];

const OLD_GREETING = "Hello, ${name}.";
const NEW_GREETING = "Hello, ${name}! Welcome to tern.";

const GREETING_SOURCE = `/** Returns a friendly greeting for \`name\`. */
export function greet(name: string): string {
  return \`Hello, \${name}.\`;
}
`;

/** The file the demo's edit leaves: what RESULT checks the workspace against. */
const EDITED_SOURCE = GREETING_SOURCE.replace(OLD_GREETING, NEW_GREETING);

/** Runs the demo and returns the exit code of its turn. */
export async function runDemo(): Promise<number> {
  const style = themeFor(wantsColor(Deno.stdout.isTerminal(), readEnv("NO_COLOR")));
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-demo-" }));
  const ternHome = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-demo-home-" }));
  const { out } = processWriters();
  const print = (text: string) => out(`${text}\n`);
  try {
    await Deno.writeTextFile(
      `${workspace}/README.md`,
      "# hello-demo\n\nA tiny project for the tern demo.\n",
    );
    const outside = `${workspace}/../escape.txt`;
    const existedBefore = await Deno.stat(outside).then(() => true, () => false);
    print(style.bold("INPUT"));
    print(`  workspace: ${workspace} (temporary)`);
    print(`  task: ${TASK}\n`);
    print(style.bold("PLAN"));
    print(PLAN.map((step, i) => `  ${i + 1}. ${step}`).join("\n") + "\n");
    print(style.bold("TOOLS"));
    // The command's output is shown under its tool line, when the model gets it.
    const provider = new ScriptedProvider((request, index) => {
      const last = request.messages.at(-1);
      if (index === 3 && last?.role === "tool") {
        print(last.content.trimEnd().split("\n").map((line) => `      ${line}`).join("\n"));
      }
      return demoScript(request, index);
    });
    const result = await runTaskWith({
      task: TASK,
      workspace,
      provider,
      output: "text",
      // The real sandbox (worker + bubblewrap, profile :workspace); review is bypassed because
      // the demo's script is fixed, and the audit log goes to a temporary tern directory.
      config: {
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
      },
      write: {
        out: () => {}, // the answer is printed under RESULT below
        err: (text) => out(`  ${text}`), // tool lines go to stdout here, indented
      },
    });
    const written = await Deno.readTextFile(`${workspace}/src/greet.ts`).catch(() => "(missing)");
    const escaped = !existedBefore && await Deno.stat(outside).then(() => true, () => false);
    // What the tools did, checked on disk: a run whose tools failed is no success.
    const problems = [
      ...(written === EDITED_SOURCE ? [] : ["src/greet.ts is not as written and edited"]),
      ...(escaped ? ["../escape.txt was written outside the workspace"] : []),
    ];
    print(`\n${style.bold("RESULT")}`);
    print(
      `  exit reason: ${result.exitReason}, ${result.rounds} model calls, ` +
        `${result.toolCalls} tool calls`,
    );
    print(`  answer: ${result.text}`);
    print("  the edit, as a diff of src/greet.ts:");
    print(
      unifiedDiff("src/greet.ts", GREETING_SOURCE, written).trimEnd().split("\n")
        .map((line) => `    ${line}`).join("\n"),
    );
    if (problems.length > 0) {
      print(`  check FAILED: ${problems.join("; ")}`);
      return 1;
    }
    print("  check: src/greet.ts is as edited, nothing was written outside the workspace");
    return exitCodeFor(result.exitReason);
  } finally {
    await Deno.remove(workspace, { recursive: true });
    await Deno.remove(ternHome, { recursive: true });
  }
}

/** The scripted model: each reply follows from what the tools answered before. */
function demoScript(request: ModelRequest, index: number): ScriptedReply {
  const call = (name: string, args: Record<string, unknown>): ScriptedReply => ({
    toolCalls: [{ id: `demo_${index}`, name, arguments: JSON.stringify(args) }],
  });
  const last = request.messages.at(-1);
  const lastText = last?.role === "tool" ? last.content : "";
  switch (index) {
    case 0:
      return { text: "I'll look at the project first.", ...call("list", { path: "." }) };
    case 1:
      return call("write", { path: "src/greet.ts", content: GREETING_SOURCE });
    case 2:
      return call("bash", { command: "wc -l src/greet.ts", description: "count its lines" });
    case 3:
      return call("write", { path: "../escape.txt", content: "left the workspace\n" });
    case 4:
      return call("edit", {
        path: "src/greet.ts",
        old_string: OLD_GREETING,
        new_string: NEW_GREETING,
      });
    case 5:
      return call("read", { path: "src/greet.ts" });
    default: {
      const verified = lastText.startsWith("SUCCEEDED") && lastText.includes(NEW_GREETING);
      return {
        text: verified
          ? "Created src/greet.ts, counted its lines in the sandbox, was refused the write " +
            "outside the workspace, made the greeting friendlier and read the file back."
          : "src/greet.ts did not read back as edited.",
      };
    }
  }
}
