/**
 * The hooks that may run in a workspace: the person's always; a project file's only when the
 * person trusted that file's hooks section as it is now (`tern hooks trust`), through the same
 * record and pinning as project MCP servers (`mcp/trust.ts`, in `<ternHome>/hooks-trust.json`).
 */
import { relative } from "../../core/path.ts";
import {
  loadTrustCheck,
  type Trustable,
  type TrustKind,
  trustServers,
  untrustServers,
} from "../../mcp/trust.ts";
import type { Warn } from "../../config/workspace_file.ts";
import { type HookCommand, type HookSource, pinHookFiles, readHookSources } from "./config.ts";

/** Project hooks' trust. */
export const HOOKS_TRUST: TrustKind = {
  file: "hooks-trust.json",
  label: "hooks",
  entries: "hooks",
  command: "tern hooks trust <digest>",
};

/** One settings file's hooks and whether they may run. */
export interface LoadedSource {
  source: HookSource;
  trusted: boolean;
  /** Why hooks trusted before are not now (the definition or a script changed). */
  whyNot?: string;
}

/** The hooks of a workspace. */
export interface LoadedHooks {
  sources: LoadedSource[];
  /** The hooks that run: the person's and the trusted project files'. */
  active: HookCommand[];
}

/**
 * Reads the hook settings and the trust record; `warn` is told of a project file skipped (not
 * JSON, unreadable, a symlink out of the workspace, a FIFO; default: stderr), which is listed
 * with its reason (`source.unreadable`) and runs nothing, while the person's hooks still run.
 * The active project hooks carry their pins (`HookCommand.pins`), which the runner checks again.
 * @throws {ConfigError} for the person's own settings file when it is not JSON, or a trust
 *   record that is not valid.
 */
export async function loadHooks(
  places: { ternHome: string; workspace: string },
  warn?: Warn,
): Promise<LoadedHooks> {
  const found = await readHookSources(places, warn);
  if (found.length === 0) return { sources: [], active: [] };
  const check = found.some((source) => source.scope === "project")
    ? await loadTrustCheck(places.ternHome, places.workspace, HOOKS_TRUST)
    : undefined;
  const sources: LoadedSource[] = [];
  for (let source of found) {
    if (source.scope === "user") {
      sources.push({ source, trusted: true });
      continue;
    }
    if (source.unreadable !== undefined) {
      sources.push({ source, trusted: false });
      continue;
    }
    // Hashing reads the files a repository names: only for hooks the person trusted before.
    const bare = trustable(source, places.workspace);
    const recorded = check!.trusted(bare) || check!.whyNot(bare) !== undefined;
    source = await pinHookFiles(source, places.workspace, { hash: recorded });
    const entry = trustable(source, places.workspace);
    const trusted = check!.trusted(entry);
    const whyNot = trusted ? undefined : check!.whyNot(entry);
    sources.push({ source, trusted, ...(whyNot === undefined ? {} : { whyNot }) });
  }
  return {
    sources,
    active: sources.filter((loaded) => loaded.trusted).flatMap((loaded) => loaded.source.hooks),
  };
}

/**
 * Records `sources` as trusted exactly as they are given: sources {@linkcode pinForTrust} made,
 * so what is recorded is what their digests were taken of, never a later read of the files.
 */
export async function trustPinned(
  places: { ternHome: string; workspace: string },
  sources: readonly HookSource[],
): Promise<void> {
  const pinned = sources.map((source) => trustable(source, places.workspace));
  await trustServers(places.ternHome, places.workspace, pinned, HOOKS_TRUST);
}

/** Hex digits of a digest: 128 bits, so no one can make two different files share one. */
const DIGEST_HEX = 32;

/** What a digest looks like. */
export const DIGEST_PATTERN = new RegExp(`^[0-9a-f]{${DIGEST_HEX}}$`);

/**
 * A readable project hook file as trust would record it (its scripts read and hashed now), and
 * its digest: a hash of its name, its hooks section and every file it pins with that file's
 * hash. What `tern hooks list` shows and `tern hooks trust` takes: the files the person reviewed.
 * @throws {RangeError} for a source that could not be read (`unreadable`).
 */
export async function pinForTrust(
  source: HookSource,
  workspace: string,
): Promise<{ source: HookSource; digest: string }> {
  if (source.unreadable !== undefined) {
    throw new RangeError(
      `Cannot take the digest of "${source.file}": it cannot be read (${source.unreadable})`,
    );
  }
  const pinned = await pinHookFiles(source, workspace);
  const files = Object.entries(pinned.files).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
  const text = JSON.stringify([relative(workspace, pinned.file), pinned.fingerprint, files]);
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  const hex = Array.from(new Uint8Array(hash), (byte) => byte.toString(16).padStart(2, "0"));
  return { source: pinned, digest: hex.join("").slice(0, DIGEST_HEX) };
}

/** Forgets the trust of every project hook file of the workspace. */
export async function untrustHooks(places: { ternHome: string; workspace: string }): Promise<void> {
  await untrustServers(places.ternHome, places.workspace, [], HOOKS_TRUST);
}

function trustable(source: HookSource, workspace: string): Trustable {
  return {
    name: relative(workspace, source.file),
    file: source.file,
    scope: source.scope,
    fingerprint: source.fingerprint,
    files: source.files,
  };
}
