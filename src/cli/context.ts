/**
 * `tern context`: what goes into the system prompt of this workspace, from which file, at what
 * size in estimated tokens; the skills index, the prompt templates and any problem with them.
 */
import { lazyKeyMasker } from "../sandbox/secrets.ts";
import { loadConfig } from "../config/mod.ts";
import { rememberedFacts } from "../harness/agent_session.ts";
import { describeContext, formatContextReport } from "../harness/resource_prompt.ts";
import { jsonForTerminal, terminalText } from "../core/terminal_text.ts";
import { readEnv, resolveWorkspace } from "./process_env.ts";
import type { RunFlags } from "./run.ts";

/**
 * Prints the report (as JSON with `json`); with `task`, the remembered facts a message of that
 * text would get, and why. Exit code 0.
 */
export async function showContext(
  task: string | undefined,
  json: boolean,
  flags: RunFlags,
): Promise<number> {
  const workspace = resolveWorkspace(flags.cwd);
  const { config } = await loadConfig({ cwd: workspace, flags: flags.config });
  const facts = await rememberedFacts(config, workspace);
  const places = {
    workspace,
    ternHome: config.ternHome,
    home: readEnv("HOME"),
    rules: config.rules,
  };
  const report = await describeContext(places, { facts, limit: config.memoryFacts, task }, {
    personal: config.serverChosenBy === undefined,
    mask: lazyKeyMasker(() => config),
  });
  const text = json
    ? jsonForTerminal(JSON.stringify(report, null, 2))
    : formatContextReport(report).map(terminalText).join("\n");
  Deno.stdout.writeSync(new TextEncoder().encode(text + "\n"));
  return 0;
}
