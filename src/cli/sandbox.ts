/**
 * `tern sandbox explain` and `tern sandbox check`: what the sandbox is, and what it would do
 * with one call, computed by the same code the agent runs (profile compiler, worker flags,
 * bubblewrap arguments, rules, classifier, policy).
 */
import { shellJoin } from "../core/shell_join.ts";
import { sourceUrl } from "../core/source_url.ts";
import { join } from "../core/path.ts";
import { loadConfig } from "../config/mod.ts";
import { analyseCall, fileRoots } from "../agent/call_facts.ts";
import { evaluate } from "../sandbox/policy.ts";
import { compileRules } from "../sandbox/rules.ts";
import { noteLabel } from "../sandbox/review.ts";
import {
  createSandbox,
  type SandboxExplanation,
  type SandboxLayers,
  type SandboxRuntime,
} from "../sandbox/runtime.ts";
import { auditDir } from "../sandbox/audit.ts";
import { personDenials } from "../harness/path_denials.ts";
import { BUILTIN_MANIFEST, builtinTools } from "../tools/mod.ts";
import { checkPath } from "../tools/paths.ts";
import { ToolError } from "../core/observation.ts";
import { InputError } from "./errors.ts";
import type { RunFlags } from "./run.ts";
import {
  processWriters,
  readEnv,
  resolveWorkspace,
  shellSourceEnv,
  terminalWriters,
} from "./process_env.ts";

/**
 * Stdout for these commands: paths, rules and their reasons come from the workspace and its
 * config, which a repository may write, so text goes through the terminal sanitizer and JSON
 * gets what JSON leaves raw escaped.
 */
function printer(flags: RunFlags): (text: string) => void {
  const { out } = terminalWriters(processWriters(), { json: flags.output !== "text" });
  return (text) => out(text + "\n");
}

/** Prints the exact worker command line and bubblewrap arguments for this workspace. */
export async function explainSandbox(flags: RunFlags): Promise<number> {
  const workspace = resolveWorkspace(flags.cwd);
  const { config } = await loadConfig({ cwd: workspace, flags: flags.config });
  const print = printer(flags);
  // A run also lets the file tools read its session's saved tool results: shown as a pattern.
  const runtime = await openRuntime(workspace, config, "explain", [
    join(config.ternHome, "sessions", "<cwd>", "<session>", "tool-results"),
  ], auditDir(config.ternHome));
  try {
    const explanation = runtime.explain();
    if (flags.output !== "text") {
      print(JSON.stringify({ workspace, mode: config.mode, ...explanation }));
      return 0;
    }
    const lines = [
      `workspace  ${workspace}`,
      `profile    ${explanation.profile}`,
      `mode       ${config.mode}`,
      "",
      "Tool worker (read, write, edit, list, glob, grep):",
      explanation.worker
        ? `  ${shellJoin(explanation.worker)}`
        : "  none: tools run in tern's own process (--no-sandbox)",
      `  The worker ${explanation.workerNote}`,
      "",
      "Shell commands (bash):",
      explanation.bwrap
        ? `  ${shellJoin(explanation.bwrap)}`
        : `  no bubblewrap: ${explanation.shellNote ?? ""}`,
    ];
    if (explanation.bwrapEnv) {
      lines.push(
        `  environment (bubblewrap's own, passed on): ${explanation.bwrapEnv.join(" ")}`,
      );
    }
    if (explanation.bwrap && explanation.shellNote) lines.push(`  note: ${explanation.shellNote}`);
    if (explanation.warmBwrap) {
      lines.push(
        "  Commands one after another run in one kept sandbox (the warm shell), started as:",
        `  ${shellJoin(explanation.warmBwrap)}`,
      );
    }
    lines.push("", "Limits (config key limits; a project may only lower them):");
    lines.push(`  ${describeLimits(explanation.limits)}`);
    if (explanation.layers) lines.push("", ...layerLines(explanation.layers));
    print(lines.join("\n"));
    return 0;
  } finally {
    await runtime.close();
  }
}

/** The shell sandbox's layers, one line each (see `SandboxLayers`). */
export function layerLines(layers: SandboxLayers): string[] {
  const home = layers.home.folder
    ? `${layers.home.folder} hidden but for ${
      layers.home.shown.length === 0 ? "nothing" : layers.home.shown.join(", ")
    } (read-only; add paths with sandbox.homeAllow in your own config)` +
      (layers.home.withoutTokens.length === 0
        ? ""
        : `; ${layers.home.withoutTokens.join(", ")} shown without the tokens written in them`)
    : "no home folder known";
  const seccomp = layers.seccomp.file
    ? `${layers.seccomp.file}: refuses ${layers.seccomp.refused.join(", ")}`
    : "NONE: the filter file could not be written in tern's home";
  const root = layers.root
    ? `tern runs as root: commands run as uid 0 without capabilities; ${layers.rootOnlyHidden} ` +
      "root-only host paths hidden"
    : "tern does not run as root: commands keep its uid, without capabilities";
  const network = layers.network.kind === "none"
    ? "none: a network namespace of its own, loopback only"
    : layers.network.kind === "hosts"
    ? `only ${layers.network.hosts.join(", ")}, through a filtering proxy started for each ` +
      "command (every host it connects to or refuses goes to the audit log)"
    : "the host's network, shared";
  const rules = layers.denied === null
    ? "no deny rule with a path"
    : `your deny rules with a path: ${layers.denied.hidden} path(s) hidden, ` +
      `${layers.denied.readOnly} read-only` +
      (layers.denied.complete
        ? ""
        : " (the search stopped at 50,000 entries: the folders it did not list are hidden whole)");
  const guards = `${layers.guards.readOnlyGit} .git folder(s) read-only; ` +
    `${layers.guards.absent.join(" and ")} cannot be created where absent` +
    (layers.guards.ownCode.length === 0
      ? ""
      : `; tern's own code, Deno and its cache read-only where a writable folder holds them ` +
        `(${layers.guards.ownCode.join(", ")})`);
  const processes = "each command in a process group and pid namespace of its own, killed " +
    "whole at its timeout or cancel; one whose tern died while it started exits (liveness pipe); " +
    "in the warm shell, every process a command started is ended before the next command" +
    (layers.cgroups.processes === undefined
      ? ""
      : `; the run's commands share a pids cgroup (${layers.cgroups.processes} at once)`);
  const memory = layers.cgroups.memoryMb === undefined
    ? "memory per process only (no memory cgroup could be made here)"
    : `all of the run's commands together hold at most ${layers.cgroups.memoryMb} MiB ` +
      "(a memory cgroup: past it the kernel kills one of their processes, never tern)";
  return [
    "Layers of the shell sandbox:",
    `  home        ${home}`,
    `  tern home   ${layers.ternHome} hidden` +
    (layers.hookScripts === null
      ? ""
      : `; your own hooks (not a project's) see ${layers.hookScripts} read-only`),
    `  seccomp     ${seccomp}`,
    `  kernel      read-only: ${layers.kernelReadOnly.join(", ")}, /sys`,
    "  sockets     only IPv4, IPv6 and netlink (Unix, vsock and other families refused), " +
    "host /run empty",
    "  descriptors every inherited descriptor above 2 closed before bubblewrap starts",
    `  network     ${network}`,
    `  guards      ${guards}`,
    `  rules       ${rules}`,
    `  processes   ${processes}`,
    "  limits      the limits above: rlimits at the head of every command, a sized tmpfs /tmp",
    `  memory      ${memory}`,
    `  root        ${root}`,
  ];
}

/**
 * Says what would happen to one call: a shell command, or a tool call as JSON
 * `{"tool": "write", "args": {...}}`. Prints the action, who decided and why.
 */
export async function checkSandbox(call: string, flags: RunFlags): Promise<number> {
  const workspace = resolveWorkspace(flags.cwd);
  const { config } = await loadConfig({ cwd: workspace, flags: flags.config });
  const { tool, args } = parseCall(call);
  const print = printer(flags);
  const builtin = builtinTools().find((entry) => entry.name === tool);
  if (builtin === undefined) {
    const known = BUILTIN_MANIFEST.map((entry) => `"${entry.name}"`).join(", ");
    throw new InputError(`Unknown tool "${tool}": expected one of ${known}`);
  }
  const rules = await compileRules(config.rules);
  const runtime = await openRuntime(workspace, config);
  try {
    const facts = await analyseCall(builtin, args, workspace);
    const policy = evaluate(facts, {
      profile: runtime.profile,
      rules,
      sessionApprovals: new Set(),
      workspace,
    });
    // The file tools' own checks come after the policy's, as in a run: a path out of the
    // workspace and its grants, a protected folder (`.git`, `.tern`), a special file.
    const refused = policy.action === "deny"
      ? undefined
      : await fileToolRefusal(builtin, args, workspace, runtime.profile.grants);
    const verdict = refused === undefined
      ? policy
      : { ...policy, action: "deny" as const, by: "tool", rule: undefined, reason: refused };
    const where = builtin.runsIn === "sandbox"
      ? (runtime.shellKind === "bwrap"
        ? "in bubblewrap"
        : `without a sandbox (${runtime.shellNote})`)
      : config.noSandbox
      ? "in a tool worker with full access (--no-sandbox)"
      : "in the confined tool worker";
    const outcome = verdict.action === "deny"
      ? "deny"
      : verdict.action === "allow"
      ? `run ${where}`
      : config.mode === "bypass"
      ? `run ${where} (review bypassed)`
      : config.mode === "auto"
      ? `ask the reviewer model, then run ${where} if it allows`
      : `ask a person (denied when not interactive), then run ${where} if allowed`;
    const decided = verdict.rule ? `${verdict.by} (${verdict.rule})` : verdict.by;
    if (flags.output !== "text") {
      print(JSON.stringify({
        tool,
        action: verdict.action,
        outcome,
        decidedBy: verdict.by,
        rule: verdict.rule,
        reason: verdict.reason,
        ...(verdict.note === undefined ? {} : { note: verdict.note }),
        profile: runtime.profile.name,
        mode: config.mode,
        risk: facts.shell ? { label: facts.shell.label, reasons: facts.shell.reasons } : undefined,
      }));
      return 0;
    }
    const lines = [
      `${outcome}`,
      `  decided by  ${decided}`,
      `  reason      ${verdict.reason}`,
      // An ask rule's own words, apart from tern's and naming the rule and its file.
      ...(verdict.note === undefined
        ? []
        : [`  note        ${noteLabel(verdict.note)} ${verdict.note.text}`.trimEnd()]),
      `  profile     ${runtime.profile.name}, mode ${config.mode}`,
    ];
    if (facts.shell) {
      const parts = facts.shell.analysis.ok
        ? facts.shell.analysis.commands.map((c) => c.argv.join(" ")).join(" | ")
        : `does not parse: ${facts.shell.analysis.error}`;
      lines.push(`  risk        ${facts.shell.label}`, `  commands    ${parts}`);
    }
    print(lines.join("\n"));
    return 0;
  } finally {
    await runtime.close();
  }
}

/**
 * Why a file tool would refuse the path of `args` in a run (the worker's `checkPath`, with the
 * profile's grants as its roots), or undefined: another tool, no path, or a path it takes.
 */
async function fileToolRefusal(
  tool: { name: string; runsIn: string; readOnly: boolean },
  args: unknown,
  workspace: string,
  grants: Parameters<typeof fileRoots>[0],
): Promise<string | undefined> {
  if (tool.runsIn !== "worker" || typeof args !== "object" || args === null) return undefined;
  const path = (args as { path?: unknown }).path ?? ".";
  if (typeof path !== "string") return undefined;
  try {
    await checkPath(await Deno.realPath(workspace), path, {
      roots: fileRoots(grants),
      forWrite: !tool.readOnly,
    });
    return undefined;
  } catch (error) {
    if (error instanceof ToolError) return `${tool.name} refuses it: ${error.message}`;
    throw error;
  }
}

function parseCall(call: string): { tool: string; args: unknown } {
  const text = call.trim();
  if (!text.startsWith("{")) return { tool: "bash", args: { command: text } };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(
      `Cannot read the tool call: ${error instanceof Error ? error.message : error}; ` +
        `give JSON like {"tool":"write","args":{"path":"a.txt","content":"x"}} or a shell command`,
    );
  }
  const fields = value as { tool?: unknown; args?: unknown };
  if (typeof fields.tool !== "string") {
    throw new InputError('The tool call needs a "tool" name');
  }
  if (fields.args !== undefined && (typeof fields.args !== "object" || fields.args === null)) {
    throw new InputError(
      'The tool call\'s "args" must be an object: {"tool":"write","args":{"path":"a.txt",…}}',
    );
  }
  return { tool: fields.tool, args: fields.args ?? {} };
}

/** The sandbox runtime for `workspace` as a run would build it (`runId` names its files). */
export async function openRuntime(
  workspace: string,
  config: Awaited<ReturnType<typeof loadConfig>>["config"],
  runId = "explain",
  extraRead?: string[],
  /** Where worker audit files go: a run's folder, so the command line shows the file. */
  auditFolder?: string,
): Promise<SandboxRuntime> {
  try {
    return await createSandbox({
      workspace,
      profile: config.profile,
      custom: config.profiles,
      limits: config.limits,
      noSandbox: config.noSandbox,
      home: readEnv("HOME"),
      homeAllow: config.sandbox.homeAllow,
      denials: await personDenials(config.rules),
      ternHome: config.ternHome,
      env: shellSourceEnv(),
      handlerUrl: sourceUrl("src/tools/worker_handler.ts"),
      runId,
      extraRead,
      auditDir: auditFolder,
    });
  } catch (error) {
    if (error instanceof RangeError) throw new InputError(error.message);
    throw error;
  }
}

/** The limits in one line, e.g. `1024 processes, 8192 MiB memory per process, …`. */
function describeLimits(limits: SandboxExplanation["limits"]): string {
  return [
    `${limits.processes} processes`,
    `${limits.memoryMb} MiB memory per process`,
    `${limits.totalMemoryMb} MiB for all commands`,
    `${limits.cpuSeconds} s CPU per process`,
    `${limits.fileSizeMb} MiB per file`,
    `${limits.tmpMb} MiB /tmp (tmpfs)`,
    `${limits.toolSeconds} s per file tool call`,
  ].join(", ");
}
