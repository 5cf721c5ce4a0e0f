/**
 * `tern hooks list|trust|untrust`: the lifecycle hooks configured for the workspace, where
 * each comes from and whether it may run; trusting the project's hook files as they are now.
 */
import { loadConfig } from "../config/mod.ts";
import type { CommandLine } from "./args.ts";
import { processWriters, resolveWorkspace, terminalWriters } from "./process_env.ts";
import type { RunFlags } from "./run.ts";
import { EXIT_FAILURE } from "./exit_codes.ts";
import { type LoadedHooks, loadHooks, trustHooks, untrustHooks } from "../sandbox/hooks/load.ts";
import { shownCommand } from "../sandbox/hooks/run.ts";
import { visibleText } from "../core/terminal_text.ts";
import { MISSING } from "../mcp/_pinned_files.ts";

type HooksLine = Extract<CommandLine, { command: "hooks" }>;

/** Runs one `tern hooks` action and returns its exit code. */
export async function runHooksCommand(line: HooksLine, flags: RunFlags): Promise<number> {
  const workspace = resolveWorkspace(flags.cwd);
  const { config } = await loadConfig({ cwd: workspace, flags: flags.config });
  const places = { ternHome: config.ternHome, workspace };
  // Commands and file contents are the repository's words.
  const write = terminalWriters(processWriters(), { json: line.json });
  if (line.action === "untrust") {
    await untrustHooks(places);
    write.out("The project's hooks are no longer trusted.\n");
    return 0;
  }
  // A project file that cannot be read is warned of on stderr and listed with its reason.
  let hooks = await loadHooks(places);
  if (line.action === "trust") {
    const project = hooks.sources.filter((loaded) => loaded.source.scope === "project");
    const broken = project.filter((loaded) => loaded.source.unreadable !== undefined);
    if (broken.length > 0) {
      // Trusting the rest would leave the project's hooks half trusted: nothing is recorded.
      const names = broken.map(({ source }) => `"${source.file}" (${source.unreadable})`);
      write.err(
        `tern: Cannot trust the project's hooks: ${names.join(", ")} cannot be read. Fix ` +
          "it, then run `tern hooks trust` again; nothing was trusted\n",
      );
      return EXIT_FAILURE;
    }
    if (project.length === 0) {
      write.out("The project has no hooks to trust.\n");
      return 0;
    }
    await trustHooks(places, project.map((loaded) => loaded.source));
    hooks = await loadHooks(places, () => {});
  }
  write.out(line.json ? JSON.stringify(hooks.sources) + "\n" : hooksText(hooks));
  return 0;
}

/** What `tern hooks list` and `/hooks` show: each file's hooks, and whether they run. */
export function hooksText(hooks: LoadedHooks): string {
  if (hooks.sources.length === 0) {
    return "No hooks are configured (~/.tern/settings.json, .tern/settings.json, " +
      ".claude/settings.json).\n";
  }
  const lines: string[] = [];
  for (const { source, trusted, whyNot } of hooks.sources) {
    const state = source.scope === "user"
      ? "yours"
      : source.unreadable !== undefined
      ? `project, UNREADABLE: its hooks never run (${
        visibleText(source.unreadable)
      }); yours still do`
      : trusted
      ? "project, trusted"
      : `project, NOT trusted: these never run${
        whyNot ? ` (${visibleText(whyNot)})` : ""
      } — review them, ` +
        "then `tern hooks trust`";
    lines.push(`${visibleText(source.file)} (${state})`);
    // What runs is shown as it is, made visible: a project's command with an escape sequence or
    // a line break could otherwise hide part of itself, or forge a line of this list.
    for (const hook of source.hooks) {
      const matcher = hook.matcher === "" ? "" : ` [${visibleText(hook.matcher)}]`;
      lines.push(
        `  ${hook.event}${matcher}: ${shownCommand(hook)} (timeout ${hook.timeoutS} s)`,
      );
    }
    for (const [file, pin] of Object.entries(source.files)) {
      // A missing script is pinned as missing: the hook's command names it where nothing is.
      const missing = pin === MISSING ? " (missing: no such file now)" : "";
      lines.push(`  pins ${visibleText(file)}${missing}`);
    }
    for (const problem of source.problems) lines.push(`  problem: ${visibleText(problem)}`);
  }
  return lines.join("\n") + "\n";
}
