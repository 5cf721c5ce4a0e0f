/**
 * Which project-defined MCP servers the person has trusted. A checked-in `.mcp.json` would
 * otherwise start arbitrary commands as soon as someone runs tern in a cloned repository, so a
 * project server starts only after `tern mcp trust` recorded its exact definition (its
 * fingerprint) for that workspace. User files are the person's own and always trusted.
 *
 * Trust also pins the workspace files the server's command line names (its script or entry
 * point, `McpServerConfig.files`): when one changes, the server needs trust again, and the
 * person is told which file changed.
 *
 * The record is `<ternHome>/mcp-trust.json`:
 * `{"version": 1, "workspaces": {"<workspace>": {"<server name>": <trusted>}}}` where
 * `<trusted>` is the fingerprint, or `{"fingerprint": "…", "files": {"<path>": "<sha256>"}}`
 * for a server that names workspace files; rewritten whole through a temporary file and a
 * rename, readable by its owner only.
 */
import { join } from "../core/path.ts";
import { visibleText } from "../core/terminal_text.ts";
import { ConfigError, describeReadError, formatValue } from "../config/errors.ts";
import { pinChanges } from "./_pinned_files.ts";
import type { McpServerConfig } from "./types.ts";

const VERSION = 1;

/**
 * What is trusted, for the record's file name and the messages: MCP servers by default; the
 * same mechanism pins project hooks (`hooks-trust.json`, `tern hooks trust`).
 */
export interface TrustKind {
  /** The record's file name in tern's home. */
  file: string;
  /** For messages: `MCP`, `hooks`. */
  label: string;
  /** What the project's entries are called: `servers`, `hooks`. */
  entries: string;
  /** The command that trusts again. */
  command: string;
}

/** Project MCP servers. */
export const MCP_TRUST: TrustKind = {
  file: "mcp-trust.json",
  label: "MCP",
  entries: "servers",
  command: "tern mcp trust",
};

/** What trust needs of an entry: an MCP server, or a project file's hooks. */
export type Trustable = Pick<McpServerConfig, "name" | "file" | "scope" | "fingerprint" | "files">;

/** What was trusted of one server: its definition's fingerprint and the files it runs. */
interface Trusted {
  fingerprint: string;
  files: Record<string, string>;
}

/** Trusted servers by name, by workspace. */
type TrustRecord = Map<string, Map<string, Trusted>>;

/** The trust of one workspace's servers. */
export interface TrustCheck {
  /** True for user-scope servers, and for project servers trusted as they are now. */
  trusted(server: Trustable): boolean;
  /**
   * Why a project server trusted before is not trusted now (`"server.js" changed since you
   * trusted it`); undefined when it is trusted or was never trusted.
   */
  whyNot(server: Trustable): string | undefined;
}

/**
 * Reads the trust record once and returns a check: true for user-scope servers; for project
 * servers, true when the record for `workspace` holds this server's name with this fingerprint
 * and the same content of every file it runs.
 * @throws {ConfigError} when the trust file exists but cannot be read or is not valid.
 */
export async function loadTrust(
  ternHome: string,
  workspace: string,
): Promise<(server: Trustable) => boolean> {
  const check = await loadTrustCheck(ternHome, workspace);
  return (server) => check.trusted(server);
}

/**
 * {@linkcode loadTrust} with the reason a server's trust lapsed.
 * @throws {ConfigError} when the trust file exists but cannot be read or is not valid.
 */
export async function loadTrustCheck(
  ternHome: string,
  workspace: string,
  kind: TrustKind = MCP_TRUST,
): Promise<TrustCheck> {
  const record = (await readTrust(trustFile(ternHome, kind), kind)).get(workspace) ?? new Map();
  const whyNot = (server: Trustable): string | undefined => {
    if (server.scope === "user") return undefined;
    const then = record.get(server.name);
    if (then === undefined) return undefined;
    if (then.fingerprint !== server.fingerprint) {
      return `its definition in "${visibleText(server.file)}" changed since you trusted it`;
    }
    const changes = pinChanges(then.files, server.files ?? {});
    return changes.length === 0 ? undefined : `${changes.join(", ")} since you trusted it`;
  };
  return {
    trusted: (server) =>
      server.scope === "user" ||
      (record.has(server.name) && whyNot(server) === undefined),
    whyNot,
  };
}

/**
 * Records `servers` as trusted for `workspace` with their current fingerprints, replacing what
 * was recorded for those names. User-scope servers need no trust and are skipped; other
 * workspaces' entries are kept.
 * @throws {ConfigError} when the trust file is invalid; a failed write rejects with the OS error.
 */
export async function trustServers(
  ternHome: string,
  workspace: string,
  servers: readonly Trustable[],
  kind: TrustKind = MCP_TRUST,
): Promise<void> {
  const file = trustFile(ternHome, kind);
  const record = await readTrust(file, kind);
  const trusted = record.get(workspace) ?? new Map<string, Trusted>();
  for (const server of servers) {
    if (server.scope !== "project") continue;
    trusted.set(server.name, { fingerprint: server.fingerprint, files: server.files ?? {} });
  }
  if (trusted.size === 0) return;
  record.set(workspace, trusted);
  await writeTrust(ternHome, file, record);
}

/**
 * Removes the trust recorded for `workspace` for the servers in `names`, or for all of its
 * servers when `names` is empty. Writes nothing when nothing was recorded.
 * @throws {ConfigError} when the trust file is invalid; a failed write rejects with the OS error.
 */
export async function untrustServers(
  ternHome: string,
  workspace: string,
  names: readonly string[],
  kind: TrustKind = MCP_TRUST,
): Promise<void> {
  const file = trustFile(ternHome, kind);
  const record = await readTrust(file, kind);
  const trusted = record.get(workspace);
  if (trusted === undefined) return;
  const removed = names.length === 0 ? trusted.size : names.filter((n) => trusted.delete(n)).length;
  if (removed === 0) return;
  if (names.length === 0 || trusted.size === 0) record.delete(workspace);
  await writeTrust(ternHome, file, record);
}

function trustFile(ternHome: string, kind: TrustKind): string {
  return join(ternHome, kind.file);
}

async function readTrust(file: string, kind: TrustKind): Promise<TrustRecord> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return new Map();
    }
    throw new ConfigError(
      `Cannot read ${kind.label} trust file "${file}": ${describeReadError(error)}`,
      {
        file,
        cause: error,
      },
    );
  }
  const invalid = (key: string, detail: string): never => {
    throw new ConfigError(
      `Invalid ${kind.label} trust file "${file}": ${key ? `"${key}": ` : ""}${detail} — ` +
        `delete the file and trust the project ${kind.entries} again with \`${kind.command}\``,
      { file, key },
    );
  };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return invalid("", "not valid JSON");
  }
  if (!isObject(data)) return invalid("", `expected an object, got ${formatValue(data)}`);
  if (data.version !== VERSION) {
    return invalid("version", `expected ${VERSION}, got ${formatValue(data.version)}`);
  }
  if (!isObject(data.workspaces)) {
    return invalid("workspaces", `expected an object, got ${formatValue(data.workspaces)}`);
  }
  const record: TrustRecord = new Map();
  for (const [workspace, servers] of Object.entries(data.workspaces)) {
    if (!isObject(servers)) return invalid(`workspaces.${workspace}`, "expected an object");
    const trusted = new Map<string, Trusted>();
    for (const [name, value] of Object.entries(servers)) {
      const entry = trustedEntry(value);
      if (entry === undefined) {
        return invalid(
          `workspaces.${workspace}.${name}`,
          'expected a fingerprint string or {"fingerprint", "files"}',
        );
      }
      trusted.set(name, entry);
    }
    record.set(workspace, trusted);
  }
  return record;
}

function trustedEntry(value: unknown): Trusted | undefined {
  if (typeof value === "string") return { fingerprint: value, files: {} };
  if (!isObject(value) || typeof value.fingerprint !== "string") return undefined;
  const files = value.files ?? {};
  if (!isObject(files) || !Object.values(files).every((hash) => typeof hash === "string")) {
    return undefined;
  }
  return { fingerprint: value.fingerprint, files: files as Record<string, string> };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

async function writeTrust(ternHome: string, file: string, record: TrustRecord): Promise<void> {
  const workspaces = Object.fromEntries(
    [...record].sort(([a], [b]) => a < b ? -1 : 1).map((
      [workspace, trusted],
    ) => [
      workspace,
      Object.fromEntries(
        [...trusted].sort(([a], [b]) => a < b ? -1 : 1).map(([name, entry]) => [
          name,
          Object.keys(entry.files).length === 0 ? entry.fingerprint : entry,
        ]),
      ),
    ]),
  );
  const body = JSON.stringify({ version: VERSION, workspaces }, null, 2) + "\n";
  await Deno.mkdir(ternHome, { recursive: true, mode: 0o700 });
  const temporary = `${file}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.writeTextFile(temporary, body, { mode: 0o600, createNew: true });
    // `mode` is filtered by the umask; the file must end up owner-only whatever the umask.
    await Deno.chmod(temporary, 0o600);
    await Deno.rename(temporary, file);
  } catch (error) {
    await Deno.remove(temporary).catch(() => {});
    throw error;
  }
}
