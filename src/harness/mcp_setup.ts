/**
 * The MCP servers of a workspace, composed for a front end: the config files read, trust
 * applied, stdio servers given a minimal environment (never an API key unless their own `env`
 * names it) and, when they ask for it, a bubblewrap sandbox. The MCP SDK loads only when a
 * server is configured.
 */
import { join, resolve } from "../core/path.ts";
import type { PermissionRule } from "../config/schema.ts";
import type { McpManager } from "../mcp/manager.ts";
import { isInside, projectFolderProblem } from "../mcp/project_paths.ts";
import type { McpServerConfig } from "../mcp/types.ts";
import { VERSION } from "../version.ts";
import { readEnv, shellSourceEnv } from "./env.ts";
import { loadMcpConfig } from "../mcp/config.ts";
import { warnPerson } from "../core/warnings.ts";
import { visibleText } from "../core/terminal_text.ts";

export { describeServer } from "./mcp_describe.ts";

export interface OpenMcpOptions {
  ternHome: string;
  workspace: string;
  /**
   * The person's permission rules: a sandboxed server's view leaves out what their deny rules
   * with a path match in the workspace, as a command's does (see sandbox/denied_paths.ts).
   */
  rules?: readonly PermissionRule[];
  /** Reads a variable for `${VAR}` in the config (default: the process environment). */
  env?: (name: string) => string | undefined;
  /** Variables the person's settings name as holding a key (`TernConfig.keyVariables`). */
  keyVariables?: readonly string[];
  /**
   * Whether the person's own servers (from tern's home) are used; false when the model's server
   * was chosen by a project's files (`TernConfig.serverChosenBy`): that model would otherwise
   * call the person's tools and read what they return. Default true.
   */
  personal?: boolean;
  /**
   * Told about a project MCP file or server that is not used (malformed, an unset `${VAR}`, a
   * symlink out of the workspace): it disables only itself; and about a server's tool not
   * offered (its schema is too large). Default: a warning on stderr.
   */
  warn?: (text: string) => void;
}

/** The configured servers and their manager; no manager when none is configured. */
export interface OpenedMcp {
  servers: McpServerConfig[];
  manager?: McpManager;
}

/**
 * Reads the MCP config and builds the manager (servers not started yet).
 * @throws {ConfigError} naming the file and key of a bad entry.
 */
export async function openMcp(options: OpenMcpOptions): Promise<OpenedMcp> {
  const loaded = await loadMcpConfig({
    ternHome: options.ternHome,
    workspace: options.workspace,
    env: options.env ?? readEnv,
    keyVariables: options.keyVariables,
    warn: options.warn ?? warnPerson,
  });
  if (loaded.servers.length === 0) return { servers: [] };
  const own = loaded.servers.filter((server) => server.scope === "user");
  const { namedInPart, toolPrefix } = await import("../mcp/tool_names.ts");
  const servers = loaded.servers.filter((server) => {
    if (server.scope === "user") return options.personal !== false;
    // The person's allow rule written for their own servers by a part of a name (`mcp__git*`
    // for `github`) would answer for a project server's tools it happens to fit (`gitx`).
    for (const rule of options.rules ?? []) {
      if (rule.from !== undefined || rule.action !== "allow" || rule.tool === undefined) continue;
      if (!namedInPart(rule.tool, server.name)) continue;
      const owner = own.find((o) => namedInPart(rule.tool!, o.name));
      if (owner === undefined) continue;
      (options.warn ?? warnPerson)(
        `MCP server "${server.name}" in "${server.file}" is not used: your rule allowing ` +
          `"${rule.tool}" (for your own server "${owner.name}") would allow its tools too — ` +
          `name your servers whole in the rule (${toolPrefix(owner.name)}*)`,
      );
      return false;
    }
    return true;
  });
  if (servers.length === 0) return { servers };
  const [{ McpManager }, { loadTrustCheck }, { safeEnv }, { networkEnv }] = await Promise.all([
    import("../mcp/manager.ts"),
    import("../mcp/trust.ts"),
    import("../sandbox/process.ts"),
    import("../sandbox/shell_env.ts"),
  ]);
  const trust = await loadTrustCheck(options.ternHome, options.workspace);
  // A server may need to reach the network (an `npx` server fetching its package) through the
  // person's proxy and CA: those variables pass, never a key.
  const source = shellSourceEnv();
  const baseEnv = { ...safeEnv(source), ...networkEnv(source) };
  const manager = new McpManager({
    servers,
    trusted: trust.trusted,
    whyUntrusted: trust.whyNot,
    workspace: options.workspace,
    clientVersion: VERSION,
    baseEnv,
    warn: options.warn ?? warnPerson,
    sandboxCommand: (config, argv) =>
      sandboxedCommand(config, argv, { ...options, env: shellSourceEnv(), baseEnv }),
  });
  return { servers, manager };
}

/**
 * Checks that each of `servers` (as the session read them: what the person was shown) is
 * defined and runs the same files now, before a trust given in the session records them and
 * starts them: a file changed since (by the model's background command) would otherwise run
 * with the trust given to what was shown.
 * @throws {Error} naming the first server that changed, and what changed.
 */
export async function checkStillAsRead(
  servers: readonly McpServerConfig[],
  options: Pick<OpenMcpOptions, "ternHome" | "workspace" | "keyVariables" | "env">,
): Promise<void> {
  const { pinChanges, unpinnableReasons } = await import("../mcp/_pinned_files.ts");
  const now = await loadMcpConfig({
    ternHome: options.ternHome,
    workspace: options.workspace,
    env: options.env ?? readEnv,
    keyVariables: options.keyVariables,
    warn: () => {},
  });
  for (const server of servers) {
    const current = now.servers.find((s) => s.name === server.name && s.scope === server.scope);
    // A pin that never holds: trust would be recorded for a server that never starts.
    const never = unpinnableReasons(server.files ?? {});
    if (never.length > 0) {
      throw new Error(
        `Cannot trust MCP server "${visibleText(server.name)}": ${
          never.join(", ")
        }; nothing trusted`,
      );
    }
    const changes = current === undefined
      ? ["its definition is gone"]
      : current.fingerprint !== server.fingerprint
      ? ["its definition changed"]
      : pinChanges(server.files ?? {}, current.files ?? {});
    if (changes.length > 0) {
      throw new Error(
        `Cannot trust MCP server "${visibleText(server.name)}": ${changes.join(", ")} since ` +
          "this session read it. Start tern again to see what it runs now, then trust it",
      );
    }
  }
}

/**
 * Tells `warn` about a project server whose trust lapsed (its definition or a file it runs
 * changed), which is not started, or the person would not know the session went on without
 * it; and about each server that fails, once.
 */
export function watchMcp(manager: McpManager, warn: (text: string) => void): void {
  for (const status of manager.status()) {
    if (status.state === "UNTRUSTED" && status.error?.startsWith("needs trust again")) {
      warn(`${status.label} is not started: ${status.error}`);
    }
  }
  const told = new Set<string>();
  manager.onChange(() => {
    for (const status of manager.status()) {
      if (status.state !== "FAILED" || told.has(status.name)) continue;
      told.add(status.name);
      warn(`${status.label} failed: ${status.error}`);
    }
  });
}

/**
 * Stdio servers run in process groups of their own, so an exit that skips `close()` (a second
 * Ctrl-C: `Deno.exit`) would leave them running: kill them as the process unloads. After
 * `close()` there is nothing left to kill (a closed connection forgets its process).
 */
export function killOnExit(manager: McpManager): void {
  globalThis.addEventListener("unload", () => manager.kill());
}

/** A sandboxed server's CPU-time limit: none in practice (68 years). */
const SERVER_CPU_SECONDS = 2 ** 31;

/**
 * `argv` inside bubblewrap, under the default rlimits of a command (not its CPU time): `/`
 * read-only, the server's writable folders bound read-write (their `.git` and tern's own config
 * read-only again), secrets and host sockets hidden, a
 * private `/tmp`, the network only when the config shares it.
 */
async function sandboxedCommand(
  config: McpServerConfig,
  argv: string[],
  context: {
    ternHome: string;
    workspace: string;
    rules?: readonly PermissionRule[];
    env: Record<string, string>;
    baseEnv: Record<string, string>;
  },
): Promise<{ argv: string[]; cleanup: () => Promise<void> }> {
  const [
    { bwrapArgvFor, launchArgv, probeBwrap },
    { gitDirsUnder, hostSocketLocations, secretLocations },
    { homeView, passwdHome },
    { HomeTokenCopies },
    { hostPrivatePaths, privateView },
    { seccompFile },
    { DEFAULT_LIMITS, ulimitPrefix },
    { findDeniedPaths },
    { personDenials },
  ] = await Promise.all([
    import("../sandbox/bwrap.ts"),
    import("../sandbox/protected_paths.ts"),
    import("../sandbox/home_view.ts"),
    import("../sandbox/home_tokens.ts"),
    import("../sandbox/host_private.ts"),
    import("../sandbox/seccomp.ts"),
    import("../sandbox/limits.ts"),
    import("../sandbox/denied_paths.ts"),
    import("./path_denials.ts"),
  ]);
  const probe = await probeBwrap();
  if (!probe.ok) {
    throw new Error(`it asks for a sandbox, and bubblewrap cannot run: ${probe.reason}`);
  }
  const sandbox = config.sandbox!;
  const writable = sandbox.writable;
  const cwd = config.cwd ?? context.workspace;
  if (config.scope === "project") checkProjectFolders(config, context);
  // The server's /tmp is a tmpfs of its own: nothing on the host to remove.
  const cleanup = () => Promise.resolve();
  try {
    const home = context.env.HOME;
    const program = executable(argv[0], context.baseEnv.PATH, cwd)
      // A project's program named by a path outside the workspace is not shown: it runs only
      // if the sandbox sees it anyway (`/usr/bin/node`), never from a masked home or /tmp.
      .filter((path) =>
        config.scope === "user" || !argv[0].includes("/") || isInside(context.workspace, path)
      );
    // The shell that sets the limits, from the person's PATH (never the server's `env`).
    const shell = executable("bash", context.baseEnv.PATH, cwd);
    // The home folder through its allowlist; the server's program and the files and folders
    // its command line and its environment name (a cache folder) stay visible, wherever they
    // are (secret locations and tern's home stay hidden all the same). Only for the person's
    // own servers: a repository's server must not name its way into the home folder.
    const own = config.scope === "user";
    const named = [
      ...program,
      ...shell,
      ...(own ? argv.slice(1).flatMap((arg) => existingPath(arg, cwd)) : []),
      ...(own ? Object.values(config.env).flatMap((value) => existingPath(value, cwd)) : []),
    ];
    const view = homeView(home, {
      ternHome: context.ternHome,
      readGrants: named,
      accountHome: passwdHome(Deno.uid()),
    });
    const shown = [...writable, cwd, ...(home ? [home] : []), ...named];
    const rootOnly = privateView(await hostPrivatePaths(), shown);
    const seccomp = await seccompFile(context.ternHome);
    const denials = await personDenials(context.rules ?? []);
    const denied = denials === null ? null : await findDeniedPaths(context.workspace, denials);
    // Folders the `.git` search cannot list are hidden whole; a writable folder itself must be.
    const unlistable: string[] = [];
    const gitDirs = await gitDirsUnder(writable.filter((path) => path !== "/"), { unlistable });
    const unlistableRoot = unlistable.find((dir) => writable.includes(dir));
    if (unlistableRoot !== undefined) {
      throw new Error(
        `tern cannot list its writable folder ${unlistableRoot} to protect .git there`,
      );
    }
    const plan = {
      cwd,
      writable,
      readOnly: [
        ...gitDirs,
        join(context.workspace, ".tern"),
        // The server's own program stays visible, even from under /tmp (private inside).
        ...program,
        ...shell,
        ...denied?.readOnly ?? [],
      ],
      pinned: [...denied?.hidden ?? [], ...denied?.readOnly ?? [], ...unlistable],
      masked: [...view.masked, ...rootOnly.masked],
      visible: [...view.visible, ...named],
      // The same under /tmp, where the sandbox's own /tmp hides the host's (a home, a cache or
      // a checkout there).
      revealed: [cwd, ...named],
      hidden: [
        context.ternHome,
        ...view.masked.flatMap((masked) => secretLocations(masked)),
        ...hostSocketLocations(context.env),
        ...rootOnly.hidden,
        ...denied?.hidden ?? [],
        ...unlistable,
      ],
      // The home configuration files that hold tokens, shown without them (beside the filter).
      replaced: new HomeTokenCopies(context.ternHome).for(home, writable),
      ...(seccomp === null ? {} : { seccomp }),
      network: sandbox.network,
      // Unused: the transport starts bubblewrap with exactly the server's environment.
      env: {},
    };
    // A command's rlimits (processes, memory, file size), set by the shell that then becomes
    // the server; its CPU time is not capped, as a server lives as long as the session.
    const limits = ulimitPrefix({ ...DEFAULT_LIMITS, cpuSeconds: SERVER_CPU_SECONDS });
    const limited = shell.length === 0
      ? argv
      : [shell[0], "-c", `${limits}exec "$@"`, "mcp-server", ...argv];
    const launch = launchArgv(plan, bwrapArgvFor(plan, limited));
    return { argv: [launch.program, ...launch.args], cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/**
 * Checks, just before a project server starts, the folders its definition names as they are
 * now: inside the workspace, no symlink on the way (a command may have swapped a folder for a
 * link since trust), a writable one not in `.git`, `.tern` or tern's home.
 * @throws {Error} naming the folder, what is wrong and how to fix it.
 */
function checkProjectFolders(
  config: McpServerConfig,
  context: { ternHome: string; workspace: string },
): void {
  const ternHome = realPathOr(context.ternHome);
  const folders = [
    { path: config.cwd ?? context.workspace, use: "cwd" as const, label: "working folder" },
    ...config.sandbox!.writable.map((path) => ({
      path,
      use: "writable" as const,
      label: "writable folder",
    })),
  ];
  for (const { path, use, label } of folders) {
    const problem = use === "writable" && isInside(ternHome, realPathOr(path))
      ? "is in tern's home — a project's server may not write there"
      : projectFolderProblem(path, context.workspace, { use, mustExist: true });
    if (problem !== undefined) {
      throw new Error(`its ${label} ${JSON.stringify(path)} ${problem} (in "${config.file}")`);
    }
  }
}

function realPathOr(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

/** `arg` as an absolute path when it names an existing file or folder (relative to `cwd`). */
function existingPath(arg: string, cwd: string): string[] {
  if (arg.startsWith("-") || arg.includes("\0")) return [];
  try {
    return [Deno.realPathSync(resolve(cwd, arg))];
  } catch {
    return [];
  }
}

/** The real path of the program `command` names (searched in `path`); none when not found. */
function executable(command: string, path: string | undefined, cwd: string): string[] {
  const candidates = command.includes("/")
    ? [resolve(cwd, command)]
    : (path ?? "").split(":").filter((dir) => dir !== "").map((dir) => join(dir, command));
  for (const candidate of candidates) {
    try {
      if (Deno.statSync(candidate).isFile) return [Deno.realPathSync(candidate)];
    } catch {
      // Not here.
    }
  }
  return [];
}
