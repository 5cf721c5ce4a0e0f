/**
 * `tern hooks list|trust|untrust`: the lifecycle hooks configured for the workspace, where
 * each comes from and whether it may run, with a digest of each project file (its hooks and
 * the scripts they name); trusting the project's hook files the person names by those digests,
 * refused for a file that changed since it was listed.
 */
import { loadConfig } from "../config/mod.ts";
import type { CommandLine } from "./args.ts";
import { processWriters, resolveWorkspace, terminalWriters } from "./process_env.ts";
import type { RunFlags } from "./run.ts";
import { EXIT_FAILURE, EXIT_USAGE } from "./exit_codes.ts";
import {
  DIGEST_PATTERN,
  type LoadedHooks,
  loadHooks,
  pinForTrust,
  trustPinned,
  untrustHooks,
} from "../sandbox/hooks/load.ts";
import type { HookSource } from "../sandbox/hooks/config.ts";
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
  // Each readable project file read and hashed once: the digests shown are of what is recorded.
  const pinned = new Map<string, { source: HookSource; digest: string }>();
  for (const { source } of hooks.sources) {
    if (source.scope !== "project" || source.unreadable !== undefined) continue;
    pinned.set(source.file, await pinForTrust(source, workspace));
  }
  if (line.action === "trust") {
    const code = await trust(line.digests, hooks, pinned, places, write);
    if (code !== 0) {
      if (code === EXIT_USAGE) write.out(listed(hooks, pinned, line.json));
      return code;
    }
    hooks = await loadHooks(places, () => {});
  }
  write.out(listed(hooks, pinned, line.json));
  return 0;
}

function listed(
  hooks: LoadedHooks,
  pinned: ReadonlyMap<string, { digest: string }>,
  json: boolean,
): string {
  const digests = new Map([...pinned].map(([file, { digest }]) => [file, digest]));
  if (!json) return hooksText(hooks, digests);
  const sources = hooks.sources.map((loaded) => {
    const digest = digests.get(loaded.source.file);
    return digest === undefined ? loaded : { ...loaded, digest };
  });
  return JSON.stringify(sources) + "\n";
}

/**
 * Trusts the project hook files whose digests `digests` names, exactly as they were read and
 * hashed (`pinned`); nothing when a file cannot be read, when no digest is given (EXIT_USAGE:
 * the list with its digests follows), or when one names no file as it is now.
 */
async function trust(
  digests: readonly string[],
  hooks: LoadedHooks,
  pinned: ReadonlyMap<string, { source: HookSource; digest: string }>,
  places: { ternHome: string; workspace: string },
  write: { out: (text: string) => void; err: (text: string) => void },
): Promise<number> {
  const err = write.err;
  const project = hooks.sources.filter((loaded) => loaded.source.scope === "project");
  const broken = project.filter((loaded) => loaded.source.unreadable !== undefined);
  if (broken.length > 0) {
    // Trusting the rest would leave the project's hooks half trusted: nothing is recorded.
    const names = broken.map(({ source }) => `"${source.file}" (${source.unreadable})`);
    err(
      `tern: Cannot trust the project's hooks: ${names.join(", ")} cannot be read. Fix ` +
        "it, then run `tern hooks trust` again; nothing was trusted\n",
    );
    return EXIT_FAILURE;
  }
  if (project.length === 0 && digests.length === 0) {
    write.out("The project has no hooks to trust.\n");
    return 0;
  }
  if (digests.length === 0) {
    err(
      "tern: Cannot trust the project's hooks without their digests: review the hooks below, " +
        "then run `tern hooks trust <digest>` with the digest of each file you trust; nothing " +
        "was trusted\n",
    );
    return EXIT_USAGE;
  }
  const bad = digests.find((digest) => !DIGEST_PATTERN.test(digest));
  if (bad !== undefined) {
    err(
      `tern: Cannot trust the project's hooks: "${visibleText(bad.slice(0, 80))}" is no digest ` +
        "(32 hex digits, as `tern hooks list` shows them); nothing was trusted\n",
    );
    return EXIT_USAGE;
  }
  const chosen = new Map<string, HookSource>();
  for (const digest of digests) {
    const match = [...pinned.values()].find((each) => each.digest === digest);
    if (match === undefined) {
      err(
        `tern: Cannot trust the project's hooks: no hook file has digest "${digest}" now (it ` +
          "changed since it was listed, or the digest is mistyped). Run `tern hooks list` " +
          "again, review what it shows, then trust its digest; nothing was trusted\n",
      );
      return EXIT_FAILURE;
    }
    chosen.set(match.source.file, match.source);
  }
  await trustPinned(places, [...chosen.values()]);
  return 0;
}

/** What `tern hooks list` and `/hooks` show: each file's hooks, and whether they run. */
export function hooksText(
  hooks: LoadedHooks,
  digests: ReadonlyMap<string, string> = new Map(),
): string {
  if (hooks.sources.length === 0) {
    return "No hooks are configured (~/.tern/settings.json, .tern/settings.json, " +
      ".claude/settings.json).\n";
  }
  const lines: string[] = [];
  for (const { source, trusted, whyNot } of hooks.sources) {
    const digest = digests.get(source.file);
    const trustCommand = digest === undefined
      ? "`tern hooks list`, then `tern hooks trust <digest>`"
      : `then \`tern hooks trust ${digest}\``;
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
      } — review them${digest === undefined ? " with " : ", "}${trustCommand}`;
    lines.push(`${visibleText(source.file)} (${state})`);
    if (digest !== undefined) lines.push(`  digest ${digest}`);
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
