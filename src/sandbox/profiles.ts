/**
 * Sandbox profiles: what tool code may technically do. A profile compiles, for one workspace,
 * into the grants of the tool worker (Deno flags) and the plan of the shell sandbox (bubblewrap).
 * Who approves crossing a profile is the review mode's business (`review.ts`), not this file's.
 */
import { isAbsolute, join, resolve } from "../core/path.ts";
import type { CustomProfile } from "../config/schema.ts";
import { formatValue } from "../config/errors.ts";
import type { GrantList, Grants } from "./types.ts";

export type { CustomProfile };

/** The built-in profiles, least to most permissive. */
export const BUILTIN_PROFILES = [
  ":read-only",
  ":workspace",
  ":external",
  ":danger-full-access",
] as const;

/** A profile compiled for one workspace. */
export interface SandboxProfile {
  name: string;
  /** What the tool worker may touch. */
  grants: Grants;
  /** Shell commands run in bubblewrap, or with no sandbox (`:danger-full-access` only). */
  shell: "bwrap" | "none";
  /** Only read-only tools and commands classified read-only may run (`:read-only`). */
  readOnly: boolean;
}

/** Where a profile is compiled. Every path is an absolute real path. */
export interface ProfileContext {
  workspace: string;
  /** The run's private temporary directory (bound at `/tmp` for shell commands). */
  tmp: string;
  /** The user's home directory, for `~/` in custom profiles. */
  home?: string;
  /** Custom profiles from config, by name. */
  custom?: Readonly<Record<string, CustomProfile>>;
}

/** Names of every profile available in `context`, built-in first (":" names are built-in only). */
export function profileNames(custom: Readonly<Record<string, CustomProfile>> = {}): string[] {
  return [...BUILTIN_PROFILES, ...Object.keys(custom).filter((name) => !name.startsWith(":"))];
}

/**
 * Compiles profile `name` for `context`.
 * @throws {RangeError} for an unknown profile name; the message lists the known ones.
 */
export function compileProfile(name: string, context: ProfileContext): SandboxProfile {
  const { workspace, tmp } = context;
  switch (name) {
    case ":read-only":
      return profile(name, { read: [workspace] }, { readOnly: true });
    case ":workspace":
      return profile(name, { read: [workspace, tmp], write: [workspace, tmp] });
    case ":external":
      return profile(name, { read: [workspace, tmp], write: [workspace, tmp], net: "all" });
    case ":danger-full-access":
      return {
        name,
        grants: { read: "all", write: "all", net: "all", env: "all", run: "all" },
        shell: "none",
        readOnly: false,
      };
  }
  // Own keys only: "constructor" or "__proto__" must not find Object.prototype.
  const custom = context.custom && Object.hasOwn(context.custom, name)
    ? context.custom[name]
    : undefined;
  if (custom === undefined || name.startsWith(":")) {
    const known = profileNames(context.custom).map((n) => `"${n}"`).join(", ");
    throw new RangeError(`Unknown sandbox profile ${formatValue(name)}: expected one of ${known}`);
  }
  const paths = (list: string[] | undefined) => expand(list, context, true);
  return profile(name, {
    read: paths(custom.read),
    write: paths(custom.write),
    net: expand(custom.net, context, false),
    run: expand(custom.run, context, false),
    env: expand(custom.env, context, false),
  });
}

/** The union of two grant sets (used when request_permissions widens a profile). */
export function widenGrants(base: Grants, extra: Partial<Grants>): Grants {
  const merge = (a: GrantList, b: GrantList | undefined): GrantList => {
    if (a === "all" || b === "all") return "all";
    return [...new Set([...a, ...(b ?? [])])];
  };
  return {
    read: merge(base.read, extra.read),
    write: merge(base.write, extra.write),
    net: merge(base.net, extra.net),
    env: merge(base.env, extra.env),
    run: merge(base.run, extra.run),
  };
}

function profile(
  name: string,
  grants: Partial<Grants>,
  options: { readOnly?: boolean } = {},
): SandboxProfile {
  return {
    name,
    grants: {
      read: grants.read ?? [],
      write: grants.write ?? [],
      net: grants.net ?? [],
      env: grants.env ?? [],
      run: grants.run ?? [],
    },
    shell: "bwrap",
    readOnly: options.readOnly ?? false,
  };
}

function expand(
  list: string[] | undefined,
  context: ProfileContext,
  paths: boolean,
): GrantList {
  if (list === undefined) return [];
  if (list.includes("*")) return "all";
  if (!paths) return [...new Set(list)];
  return [...new Set(list.map((entry) => expandPath(entry, context)))];
}

function expandPath(entry: string, context: ProfileContext): string {
  let path = entry.replaceAll("<workspace>", context.workspace).replaceAll("<tmp>", context.tmp);
  if (path === "~" || path.startsWith("~/")) {
    if (context.home === undefined) {
      throw new RangeError(`Cannot expand "${entry}": the home directory is unknown`);
    }
    path = join(context.home, path.slice(1));
  }
  return isAbsolute(path) ? resolve(path) : resolve(context.workspace, path);
}
