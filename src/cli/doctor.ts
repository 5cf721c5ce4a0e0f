/**
 * `tern doctor`: checks that the sandbox really works here — Deno, bubblewrap, the tool worker
 * and a shell command through the shell sandbox — and that the configuration loads. Exit code
 * 0 when everything works, 2 when the configuration does not load or its rules are refused (as
 * every run would exit), else 1 when another check fails; each line says what and how to fix
 * it. A configuration that does not load fails its check, and the sandbox is then checked with
 * the built-in defaults.
 */
import { loadConfig, type TernConfig } from "../config/mod.ts";
import { join } from "../core/path.ts";
import { terminalText } from "../core/terminal_text.ts";
import { EXIT_FAILURE, EXIT_USAGE } from "./exit_codes.ts";
import { probeBwrap } from "../sandbox/bwrap.ts";
import { checkProfile } from "./config.ts";
import { processWriters, readEnv, resolveWorkspace } from "./process_env.ts";
import type { RunFlags } from "./run.ts";
import { openRuntime } from "./sandbox.ts";

/** Runs the checks and prints one line per check. */
export async function runDoctor(flags: RunFlags): Promise<number> {
  const lines: string[] = [];
  let failures = 0;
  let configFailed = false;
  const report = (ok: boolean, what: string, detail: string) => {
    if (!ok) failures++;
    lines.push(`${ok ? "ok  " : "FAIL"} ${what.padEnd(10)} ${detail}`);
  };
  const reportConfig = (what: string, error: unknown) => {
    configFailed = true;
    report(false, what, error instanceof Error ? error.message : String(error));
  };
  report(true, "deno", `${Deno.version.deno} (${Deno.execPath()})`);
  // First: the workspace is where no program started on the host may come from.
  const workspace = resolveWorkspace(flags.cwd);
  const bwrap = await probeBwrap();
  report(
    bwrap.ok,
    "bubblewrap",
    bwrap.ok
      // Whether commands use it is the configuration's: the shell check below says.
      ? `${bwrap.version}: a trial sandbox started here`
      : `${bwrap.reason}; shell commands will each need explicit approval. Install it ` +
        "(apt-get install bubblewrap) or opt out with --no-sandbox",
  );
  let config: TernConfig | undefined;
  // A diagnostic changes nothing: a tern home not made yet is stood in for by a temporary one,
  // as is the defaults' own when the configuration does not load. Removed at the end.
  let scratch: string | undefined;
  try {
    config = (await loadConfig({ cwd: workspace, flags: flags.config })).config;
    // A profile no run would start with fails here, and the checks below use the defaults.
    await checkProfile(config, workspace);
    report(true, "config", `profile ${config.profile}, mode ${config.mode}`);
    lines.push(reviewerLine(config));
    if (!isFolder(config.ternHome)) {
      report(true, "tern home", `"${config.ternHome}" will be created on first run`);
      scratch = await Deno.makeTempDir({ prefix: "tern-doctor-" });
      config = { ...config, ternHome: scratch };
    }
  } catch (error) {
    reportConfig("config", error);
    scratch ??= await Deno.makeTempDir({ prefix: "tern-doctor-" });
    config = await builtInDefaults(scratch).catch(() => undefined);
    if (config !== undefined) {
      lines.push(`note ${"config".padEnd(10)} the checks below use the built-in defaults`);
    }
  }
  try {
    if (config !== undefined) await checkSandbox(config, workspace, { report, reportConfig });
  } finally {
    if (scratch !== undefined) await Deno.remove(scratch, { recursive: true });
  }
  // Checks quote servers and command output: made safe for a terminal (doctor adds no styling).
  processWriters().out(terminalText(lines.join("\n")) + "\n");
  return configFailed ? EXIT_USAGE : failures === 0 ? 0 : EXIT_FAILURE;
}

/**
 * The configuration with nothing set: no file, variable or flag of the person's or the
 * project's, and tern's home an empty folder in `folder`.
 */
async function builtInDefaults(folder: string): Promise<TernConfig> {
  const empty = join(folder, "workspace");
  const home = join(folder, "home");
  await Deno.mkdir(empty);
  await Deno.mkdir(home);
  return (await loadConfig({ cwd: empty, env: { TERN_HOME: home }, warn: () => {} })).config;
}

function isFolder(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/** How a check reports: its outcome, or (the rules') a configuration that a run would refuse. */
interface Reporters {
  report: (ok: boolean, what: string, detail: string) => void;
  reportConfig: (what: string, error: unknown) => void;
}

/** The rules', the sandbox's, the worker's and a shell command's checks under `config`. */
async function checkSandbox(
  config: TernConfig,
  workspace: string,
  { report, reportConfig }: Reporters,
): Promise<void> {
  // What every run checks before it starts: the profile's name and each rule's examples.
  const { checkSandboxConfig } = await import("../harness/sandbox_config.ts");
  try {
    const rules = await checkSandboxConfig(config, workspace, readEnv("HOME"));
    report(
      true,
      "rules",
      `${rules.length} rule${rules.length === 1 ? "" : "s"}, each as its examples say`,
    );
  } catch (error) {
    reportConfig("rules", error);
  }
  const runtime = await openRuntime(workspace, config, "doctor").catch((error: Error) => {
    report(false, "sandbox", error.message);
    return undefined;
  });
  if (runtime !== undefined) {
    try {
      const signal = AbortSignal.timeout(30_000);
      if (runtime.worker) {
        const obs = await runtime.worker.call("list", { path: "." }, { signal });
        const { workerKind, workerNote } = runtime.explain();
        report(
          obs.status === "SUCCEEDED",
          "worker",
          obs.status === "SUCCEEDED"
            ? `${workerKind === "none" ? "the" : "a confined"} worker listed the workspace ` +
              `(${runtime.profile.name}); it ${workerNote}`
            : `${obs.code}: ${obs.message}`,
        );
      } else {
        report(true, "worker", "none: --no-sandbox runs tools in tern's process");
      }
      const shell = await runtime.shell("echo ok", { cwd: workspace, timeoutMs: 10_000, signal });
      const shellOk = shell.code === 0 && shell.output.trim() === "ok";
      report(
        shellOk,
        "shell",
        shellOk
          ? runtime.shellKind === "bwrap"
            ? "a command ran in bubblewrap"
            : `ran ${runtime.shellNote}`
          : `exit ${shell.code}: ${shell.output.trim().slice(0, 200)}`,
      );
      const layers = runtime.explain().layers;
      if (layers) {
        report(
          layers.seccomp.file !== null,
          "seccomp",
          layers.seccomp.file !== null
            ? `${layers.seccomp.refused.length} kinds of calls refused, Unix and vsock sockets included`
            : "no filter: tern's home is not writable, so commands run without one",
        );
        report(
          true,
          "home",
          layers.home.folder
            ? `${layers.home.folder} hidden from commands but for ${layers.home.shown.length} ` +
              "toolchain and cache entries (tern sandbox explain lists them)"
            : "no home folder known",
        );
        report(
          true,
          "root",
          layers.root
            ? "running as root: commands run as uid 0 without capabilities, under the seccomp " +
              `filter, /proc/sys and /sys read-only, ${layers.rootOnlyHidden} root-only host ` +
              "paths hidden"
            : `not root (uid ${Deno.uid()}): commands cannot read other users' private files`,
        );
      } else if (Deno.uid() === 0) {
        report(true, "root", "running as root, and shell commands are not in bubblewrap");
      }
    } finally {
      await runtime.close();
    }
  }
}

/**
 * Whether the AUTO reviewer is a model of its own. The same model as the worker's can be
 * steered by the same injected text, so a separate `reviewModel` is recommended (a note, not
 * a failure: the check passes either way).
 */
export function reviewerLine(
  config: Pick<TernConfig, "model" | "reviewModel" | "ownModel">,
): string {
  // A project's model is not its own reviewer (TernConfig.ownModel).
  const reviewer = config.reviewModel ?? config.ownModel?.model ?? config.model;
  if (reviewer !== config.model) {
    return `ok   ${"reviewer".padEnd(10)} "${reviewer}" reviews calls in --mode auto ` +
      `(the working model is "${config.model}")`;
  }
  return `note ${"reviewer".padEnd(10)} --mode auto reviews calls with the working model ` +
    `"${config.model}": set "reviewModel" (config, TERN_REVIEW_MODEL) to a different model, so ` +
    "text that steers the agent cannot also steer its reviewer";
}
