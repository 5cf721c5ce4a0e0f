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

const TASK = "Look around this project, then add src/greet.ts exporting greet(name) " +
  "and check the file by reading it back.";

const GREETING_SOURCE = `/** Returns a friendly greeting for \`name\`. */
export function greet(name: string): string {
  return \`Hello, \${name}! Welcome to tern.\`;
}
`;

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
    print(style.bold("INPUT"));
    print(`  workspace: ${workspace} (temporary)`);
    print(`  task: ${TASK}\n`);
    print(style.bold("TOOLS"));
    const provider = new ScriptedProvider(demoScript);
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
    print(`\n${style.bold("RESULT")}`);
    print(
      `  exit reason: ${result.exitReason}, ${result.rounds} model calls, ` +
        `${result.toolCalls} tool calls`,
    );
    print(`  answer: ${result.text}`);
    print("  src/greet.ts:");
    print(written.trimEnd().split("\n").map((line) => `    ${line}`).join("\n"));
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
  switch (index) {
    case 0:
      return { text: "I'll look at the project first.", ...call("list", { path: "." }) };
    case 1:
      return call("write", { path: "src/greet.ts", content: GREETING_SOURCE });
    case 2:
      return call("read", { path: "src/greet.ts" });
    default: {
      const last = request.messages.at(-1);
      const verified = last?.role === "tool" && last.content.startsWith("SUCCEEDED") &&
        last.content.includes("export function greet");
      return {
        text: verified
          ? "Created src/greet.ts with greet(name) and read it back: the content is as written."
          : "src/greet.ts did not read back as written.",
      };
    }
  }
}
