/**
 * The process's own edges, shared by every front end: its stdout and stderr, the environment
 * variables tern may read, the variables shell commands may inherit, and the workspace.
 */
import { resolveTernHome } from "../config/mod.ts";
import { repositoryHoldingHome } from "../config/tern_home.ts";
import { guardHostPrograms, programsOnlyIn } from "../core/host_programs.ts";
import { InputError, writingOutput } from "./errors.ts";
import { jsonForTerminal, terminalText } from "../core/terminal_text.ts";
import { readEnv, shellSourceEnv } from "../harness/env.ts";
import { pathProblem } from "../session/regular_file.ts";
import { isInside } from "../tools/paths.ts";
import { wantsColor } from "../tui/theme.ts";

export { readEnv, shellSourceEnv };

/**
 * Whether text for a stream that `isTerminal` may be coloured: a terminal, NO_COLOR unset or
 * empty, and TERM not "dumb" (such a terminal, an editor's shell buffer say, prints colour
 * codes as text).
 */
export function colorWanted(isTerminal: boolean): boolean {
  return wantsColor(isTerminal && readEnv("TERM") !== "dumb", readEnv("NO_COLOR"));
}

/** Writers to the process's stdout and stderr that never write partially. */
export function processWriters() {
  const encoder = new TextEncoder();
  return {
    out: (text: string) => writeAll(Deno.stdout, encoder.encode(text)),
    err: (text: string) => writeAll(Deno.stderr, encoder.encode(text)),
  };
}

/**
 * `writers` for plain text that quotes the model, tools, servers or sessions: every text goes
 * through `terminalText()` on its way out. With `json`, stdout gets JSON, so it only gets the
 * characters JSON leaves raw escaped (`jsonForTerminal()`: the same JSON value).
 */
export function terminalWriters(
  writers: { out: (text: string) => void; err: (text: string) => void },
  options: { json?: boolean } = {},
) {
  return {
    out: options.json
      ? (text: string) => writers.out(jsonForTerminal(text))
      : (text: string) => writers.out(terminalText(text)),
    err: (text: string) => writers.err(terminalText(text)),
  };
}

/**
 * Writes all of `bytes`. A reader that went away (`tern … | head`) is not an error of ours: the
 * rest is dropped. @throws {OutputError} when the write fails otherwise (a full disk).
 */
function writeAll(target: { writeSync(p: Uint8Array): number }, bytes: Uint8Array): void {
  let offset = 0;
  try {
    writingOutput(() => {
      while (offset < bytes.length) offset += target.writeSync(bytes.subarray(offset));
    });
  } catch (error) {
    if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
  }
}

/**
 * The real path of the workspace `cwd` names, for every command bound to one.
 * @throws {InputError} when it is not a folder; when it is tern's home or inside it: commands
 * there could rewrite tern's config, trust records and sessions; when it holds tern's temporary
 * folder (TMPDIR, else /tmp): commands could change what tern keeps there; when it lies in the
 * git repository that holds HOME and TERN_HOME is unset: the repository could provide the
 * person's own config (see `refuseHomeInRepository`); when it holds the only folders
 * of PATH with bash, bubblewrap or git (`/`, `/usr`): tern could start none of them.
 */
export function resolveWorkspace(cwd: string): string {
  if (cwd === "") {
    throw new InputError('Cannot use workspace "": the path is empty; give a folder (-C <dir>)');
  }
  let real: string;
  try {
    real = Deno.realPathSync(cwd);
    if (!Deno.statSync(real).isDirectory) throw new Deno.errors.NotADirectory(cwd);
  } catch (error) {
    const why = error instanceof Deno.errors.NotFound
      ? "not found"
      : error instanceof Deno.errors.NotADirectory
      ? "not a directory"
      : pathProblem(error);
    throw new InputError(`Cannot use workspace "${cwd}": ${why}`);
  }
  refuseTernHome(cwd, real);
  refuseHomeInRepository(cwd, real);
  refuseProgramFolders(cwd, real);
  refuseTempInside(cwd, real);
  // Every command bound to a workspace: no program it starts on the host comes from there.
  guardHostPrograms([real]);
  return real;
}

/** The programs every workspace needs on the host: the shell, the sandbox and git. */
const NEEDED_PROGRAMS = ["bash", "bwrap", "git"];

/**
 * Throws when the workspace `real` (named `cwd`) holds the only folders tern finds its own
 * programs in (`/`, `/usr`, `/usr/bin`): tern never starts a program from the workspace on the
 * host, so there every command would fail to start.
 */
function refuseProgramFolders(cwd: string, real: string): void {
  const hidden = programsOnlyIn(real, NEEDED_PROGRAMS);
  if (hidden.length === 0) return;
  const folders = [...new Set(hidden.map((program) => `"${program.folder}"`))].join(", ");
  const names = hidden.map((program) => program.name).join(", ");
  throw new InputError(
    `Cannot use workspace "${cwd}": it holds ${folders}, where the system's programs ` +
      `(${names}) are, and tern never starts a program from its workspace outside the ` +
      "sandbox; start tern in your project's folder",
  );
}

/**
 * Throws when the workspace `real` (named `cwd`) is or holds the folder tern makes its
 * temporary files in (`TMPDIR`, else /tmp; a relative one is the current folder's): there
 * commands could change what tern keeps and trusts (the sandbox's seccomp filter, copies of
 * hook scripts it runs, the proxy's socket) and name their own folders like the private tmp
 * folders tern removes.
 */
function refuseTempInside(cwd: string, real: string): void {
  const variable = readEnv("TMPDIR");
  const named = variable === undefined || variable === "" ? "/tmp" : variable;
  let tmp: string;
  try {
    tmp = Deno.realPathSync(named.startsWith("/") ? named : `${Deno.cwd()}/${named}`);
  } catch {
    return; // Not there: making a temporary folder fails, and says so.
  }
  if (!isInside(real, tmp)) return;
  const where = tmp === real ? "is" : "holds";
  const fix = named === variable
    ? "set TMPDIR to a folder outside the workspace, or unset it"
    : "start tern in a folder of its own (mkdir /tmp/work), or set TMPDIR to a folder outside it";
  const which = named === variable ? `TMPDIR "${variable}"` : `"/tmp"`;
  throw new InputError(
    `Cannot use workspace "${cwd}": it ${where} tern's temporary folder ${which}, where ` +
      `commands could change the files tern keeps there; ${fix}`,
  );
}

/**
 * Throws when TERN_HOME is unset and the workspace `real` (named `cwd`) lies in the git
 * repository that holds HOME, whose `.tern` is then tern's home: that repository (cloned as a
 * container's home, say) could provide the person's own config, hooks and MCP servers included.
 * A TERN_HOME the person sets is theirs, wherever it lies; `cd ~ && tern` in a home that is no
 * repository is the person's own home as ever.
 */
function refuseHomeInRepository(cwd: string, real: string): void {
  const variable = readEnv("TERN_HOME");
  const home = readEnv("HOME");
  if ((variable !== undefined && variable !== "") || home === undefined || !home.startsWith("/")) {
    return;
  }
  let folder: string;
  try {
    folder = Deno.realPathSync(home);
  } catch {
    return; // No home folder: loading the config says so.
  }
  const repository = repositoryHoldingHome(folder, real);
  if (repository === null) return;
  const ternHome = `${home.replace(/\/+$/, "")}/.tern`;
  throw new InputError(
    `Cannot use workspace "${cwd}": it lies in the git repository "${repository}" that holds ` +
      `HOME, so tern's home "${ternHome}" (your config, hooks and MCP servers) could come ` +
      `from that repository; if the repository is yours, set TERN_HOME="${ternHome}", else ` +
      "set TERN_HOME to a folder outside it",
  );
}

/** Throws when the workspace `real` (named `cwd`) is tern's home or lies inside it. */
function refuseTernHome(cwd: string, real: string): void {
  let named: string;
  try {
    // As loadConfig() finds it for this workspace.
    named = resolveTernHome({
      cwd: real,
      env: { TERN_HOME: readEnv("TERN_HOME"), HOME: readEnv("HOME") },
    }).path;
  } catch {
    return; // No tern home at all: loading the config says so.
  }
  let home: string;
  try {
    home = Deno.realPathSync(named);
  } catch {
    return; // Not made yet: no workspace can lie inside it.
  }
  if (!isInside(home, real)) return;
  const where = real === home ? "is tern's home" : `is inside tern's home "${home}"`;
  throw new InputError(
    `Cannot use workspace "${cwd}": it ${where} (TERN_HOME): tern does not work on its own ` +
      "config and sessions; start tern in your project's folder",
  );
}
