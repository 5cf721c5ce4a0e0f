/**
 * What may widen the sandbox, and who may decide it. Pure functions over a normalised
 * request_permissions request (absolute real paths) and the places it is compared with:
 * - {@linkcode ternHomeReach}: tern's own files (config, trust, sessions) are never granted;
 * - {@linkcode reviewerLimits}: what the AUTO reviewer may not grant on its own (running
 *   without the sandbox, writes outside the workspace, the home folder, tern's home, secret
 *   locations, secret-looking variables, and network while it cannot be limited to a host),
 *   which goes to a person or is denied;
 * - {@linkcode grantRuleCovers}: whether an allow rule of the person's own config names exactly
 *   (or more than) what is asked, the only way a grant happens without review.
 */
import { isAbsolute, isInside, join, resolve } from "../core/path.ts";
import { HOME_ALLOWLIST } from "../sandbox/home_view.ts";
import { secretLocations } from "../sandbox/protected_paths.ts";
import { mayReadVariable, unreadableVariableHint } from "../config/env.ts";
import { unpassableReason } from "../sandbox/shell_env.ts";

/** What request_permissions asks for, normalised (absolute real paths, two-word prefixes). */
export interface GrantRequest {
  read: string[];
  write: string[];
  net: string[];
  env: string[];
  commands: string[];
  withoutSandbox: boolean;
}

/** Where a grant is judged: absolute real paths. */
export interface GrantPlaces {
  workspace: string;
  /** The person's home folder; without it only tern's home and `/` are checked. */
  home?: string;
  /** tern's own folder (`TERN_HOME`, default `~/.tern`). */
  ternHome: string;
  /**
   * Whether a host grant reaches only that host for shell commands too. False today: any
   * host grant shares the whole network with bubblewrap, so the reviewer may not grant one.
   */
  netPerHost?: boolean;
  /**
   * A variable's value in the environment commands would get it from (tern's own); without it
   * only names are judged.
   */
  envValue?: (name: string) => string | undefined;
}

/** What a rule for `request_permissions` lists (see `PermissionRule`). */
export interface GrantLists {
  read?: readonly string[];
  write?: readonly string[];
  hosts?: readonly string[];
  env?: readonly string[];
  commands?: readonly string[];
}

/** System files and folders that hold keys or password hashes. */
const SYSTEM_SECRETS: readonly string[] = [
  "/etc/shadow",
  "/etc/gshadow",
  "/etc/shadow-",
  "/etc/gshadow-",
  "/etc/sudoers",
  "/etc/sudoers.d",
  "/etc/ssh",
  "/etc/ssl/private",
  "/root",
];

/**
 * A sentence saying why a requested variable cannot be granted, for the first such one;
 * undefined when each can. A variable that loads code or looks like a secret never passes into
 * a command (`unpassableReason`), and one tern cannot read passes nothing: granting either
 * would say "Granted" and change nothing.
 */
export function unpassableEnv(request: GrantRequest, places: GrantPlaces): string | undefined {
  for (const name of request.env) {
    const value = places.envValue?.(name);
    const why = unpassableReason(name, value);
    if (why !== undefined) return `variable "${name}" never reaches a command: ${why}`;
    if (places.envValue !== undefined && value === undefined) {
      return `variable "${name}" ` +
        (mayReadVariable(name)
          ? "is not set in tern's environment: set it before starting tern"
          : `is one tern may not read: ${unreadableVariableHint(name)}`);
    }
  }
  return undefined;
}

/**
 * The first requested path that is tern's home or inside it, with a sentence saying why it is
 * refused; undefined when none is. Nobody grants these: the model must never change (or read)
 * tern's configuration, trust decisions or sessions.
 */
export function ternHomeReach(request: GrantRequest, places: GrantPlaces): string | undefined {
  const path = [...request.read, ...request.write].find((p) => isInside(places.ternHome, p));
  if (path === undefined) return undefined;
  return `"${path}" is tern's own folder (${places.ternHome}: configuration, trust and ` +
    "sessions), which is never granted";
}

/**
 * Why the AUTO reviewer may not grant `request` on its own: one phrase per reason, none when
 * the request is narrow. Only a person may grant running without the sandbox, writing outside
 * the workspace, any path that is (or holds) the home folder, `/`, tern's home or a secret
 * location (ssh and cloud keys, `/etc/shadow`, …), any other path in the home folder the
 * sandbox hides (all but the workspace and the toolchain folders), variables whose name or
 * value looks secret or whose name injects code,
 * and hosts while a host grant opens the whole network to shell commands (`netPerHost`).
 */
export function reviewerLimits(request: GrantRequest, places: GrantPlaces): string[] {
  const limits: string[] = [];
  if (request.withoutSandbox) limits.push("running commands without the sandbox");
  for (const path of request.write) {
    if (!isInside(places.workspace, path)) limits.push(`writing outside the workspace ("${path}")`);
  }
  const secrets = [
    ...(places.home === undefined ? [] : secretLocations(places.home)),
    ...SYSTEM_SECRETS,
  ];
  for (const path of unique([...request.read, ...request.write])) {
    if (path === "/" || (places.home !== undefined && isInside(path, places.home))) {
      limits.push(`the home folder or a folder holding it ("${path}")`);
    } else if (isInside(path, places.ternHome) || isInside(places.ternHome, path)) {
      limits.push(`tern's own folder ("${path}")`);
    } else if (secrets.some((secret) => isInside(path, secret) || isInside(secret, path))) {
      limits.push(`a secret location or a folder holding one ("${path}")`);
    } else if (hiddenInHome(path, places)) {
      limits.push(
        `a part of the home folder the sandbox hides (other projects, shell histories, other ` +
          `programs' credentials) ("${path}")`,
      );
    }
  }
  if (request.net.length > 0 && !places.netPerHost) {
    limits.push(
      `network access (${request.net.join(", ")}): shell commands would reach every host`,
    );
  }
  for (const name of request.env) {
    if (unpassableReason(name, places.envValue?.(name)) !== undefined) {
      limits.push(`an environment variable that may hold a secret or run code ("${name}")`);
    }
  }
  return limits;
}

/**
 * True when `path` lies in the home folder, outside the workspace and outside the toolchain
 * and cache folders commands see anyway (`HOME_ALLOWLIST`): what the home view hides, whatever
 * its name (other agents' auth files, shell histories, other projects), which a denylist of
 * secret locations always misses one of.
 */
function hiddenInHome(path: string, places: GrantPlaces): boolean {
  const { home, workspace } = places;
  if (home === undefined || !isInside(home, path) || isInside(workspace, path)) return false;
  return !HOME_ALLOWLIST.some((entry) => isInside(join(home, entry.path), path));
}

/**
 * True when `rule` lists everything `request` asks for: each read path inside a listed read
 * or write path, each write path inside a listed write path, and each host, variable and
 * command prefix listed exactly. Running without the sandbox is never covered by a rule.
 * Rule paths must already be absolute real paths ({@linkcode expandRulePath}).
 */
export function grantRuleCovers(rule: GrantLists, request: GrantRequest): boolean {
  if (request.withoutSandbox) return false;
  const write = rule.write ?? [];
  const read = [...(rule.read ?? []), ...write];
  const within = (roots: readonly string[]) => (path: string) =>
    roots.some((root) => isInside(root, path));
  const listed = (list: readonly string[] | undefined) => (item: string) =>
    (list ?? []).includes(item);
  return request.read.every(within(read)) && request.write.every(within(write)) &&
    request.net.every(listed(rule.hosts)) && request.env.every(listed(rule.env)) &&
    request.commands.every(listed(rule.commands));
}

/**
 * True when `rule` (a deny rule) touches `request`: it lists nothing (so it refuses every
 * request) or it lists something the request asks for (a path or a command prefix overlapping
 * either way).
 */
export function grantRuleTouches(rule: GrantLists, request: GrantRequest): boolean {
  const lists = [rule.read, rule.write, rule.hosts, rule.env, rule.commands];
  if (lists.every((list) => list === undefined || list.length === 0)) return true;
  const paths = [...(rule.read ?? []), ...(rule.write ?? [])];
  const overlaps = (path: string) =>
    paths.some((root) => isInside(root, path) || isInside(path, root));
  return [...request.read, ...request.write].some(overlaps) ||
    request.net.some((host) => (rule.hosts ?? []).some((listed) => sameHost(listed, host))) ||
    request.env.some((name) => (rule.env ?? []).includes(name)) ||
    request.commands.some((prefix) =>
      (rule.commands ?? []).some((listed) => nests(listed, prefix))
    );
}

/**
 * True when one command prefix covers the other: the same words, or one the first words of the
 * other (`git` covers `git push`, and a grant of `git` lets `git -c x=y push` run unasked).
 */
function nests(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b} `) || b.startsWith(`${a} `);
}

/**
 * A rule's path as an absolute real path: `~` is the home folder, `<workspace>` the workspace,
 * a relative path is relative to the workspace. A path that does not exist is resolved
 * lexically.
 * @throws {RangeError} for `~` when the home folder is unknown.
 */
export function expandRulePath(entry: string, places: GrantPlaces): string {
  const full = writtenRulePath(entry, places);
  try {
    return Deno.realPathSync(full);
  } catch {
    return full;
  }
}

/**
 * An allow rule's path as {@linkcode expandRulePath} gives it, or undefined when it is written
 * in the workspace but leads out of it: the repository may ship a link there (`docs` to
 * `~/.ssh`), and the person's rule about their workspace must not follow it elsewhere.
 * @throws {RangeError} for `~` when the home folder is unknown.
 */
export function allowRulePath(entry: string, places: GrantPlaces): string | undefined {
  const path = expandRulePath(entry, places);
  const written = isInside(places.workspace, writtenRulePath(entry, places));
  return written && !isInside(places.workspace, path) ? undefined : path;
}

/** A rule's path with `<workspace>` and `~` expanded, absolute, resolved lexically. */
function writtenRulePath(entry: string, places: GrantPlaces): string {
  let path = entry.replaceAll("<workspace>", places.workspace);
  if (path === "~" || path.startsWith("~/")) {
    if (places.home === undefined) {
      throw new RangeError(`Cannot expand "${entry}": the home directory is unknown`);
    }
    path = join(places.home, path.slice(1));
  }
  return isAbsolute(path) ? resolve(path) : resolve(places.workspace, path);
}

/**
 * `entry` (`host`, `host:port`, `[v6]` or `[v6]:port`) as the commands' proxy reads it: the
 * host lower-cased, an IPv4 address in any spelling (`0xa9.0xfe.0xa9.0xfe`, `2852039166`) in
 * dotted decimal, an IPv6 address compressed, no trailing dot. A person, the reviewer and the
 * rules see what is reached, never a spelling that hides it. Undefined when it is not a host.
 */
export function canonicalHost(entry: string): string | undefined {
  const found = /^(\[[^\]]+\]|[^:\[\]\/@\s]+)(?::(\d{1,5}))?$/.exec(entry.trim());
  if (found === null) return undefined;
  try {
    const url = new URL(`http://${found[1]}/`);
    if (url.port !== "" || url.pathname !== "/" || url.hostname === "") return undefined;
    const host = url.hostname.replace(/\.$/, "");
    return found[2] === undefined ? host : `${host}:${Number(found[2])}`;
  } catch {
    return undefined;
  }
}

/**
 * True when two host entries name the same host (any two spellings of this machine's loopback
 * do) and may name the same port: one without a port (any port) overlaps every port of its host.
 */
function sameHost(a: string, b: string): boolean {
  const split = (entry: string) => {
    const canonical = canonicalHost(entry) ?? entry;
    const port = /:(\d+)$/.exec(canonical);
    return port === null
      ? { host: canonical, port: undefined }
      : { host: canonical.slice(0, port.index), port: port[1] };
  };
  const [x, y] = [split(a), split(b)];
  // Every spelling of this machine's loopback reaches the same services.
  const same = x.host === y.host || (isThisMachine(x.host) && isThisMachine(y.host));
  return same && (x.port === undefined || y.port === undefined || x.port === y.port);
}

/** One line saying what `request` asks for and for how long (`scope`). */
export function describeRequest(request: GrantRequest, scope: string): string {
  const parts: string[] = [];
  if (request.read.length > 0) parts.push(`read ${request.read.join(", ")}`);
  if (request.write.length > 0) parts.push(`write ${request.write.join(", ")}`);
  if (request.net.length > 0) parts.push(`network ${request.net.join(", ")}`);
  // Commands have a loopback of their own: a grant of one reaches the host's, which reads alike.
  const local = request.net.filter(isThisMachine);
  if (local.length > 0) {
    parts.push(
      `${local.join(", ")} ${
        local.length === 1 ? "is" : "are"
      } this machine's own services, outside the sandbox`,
    );
  }
  if (request.env.length > 0) parts.push(`env ${request.env.join(", ")}`);
  if (request.commands.length > 0) {
    const how = request.withoutSandbox ? "run WITHOUT the sandbox" : "run without asking";
    parts.push(`${how}: ${request.commands.join(", ")}`);
  }
  return `${parts.join("; ")} (for this ${scope})`;
}

/**
 * True when `host` (canonical, as `canonicalHost` gives it) is this machine's loopback or any
 * address (`localhost`, `127.0.0.0/8`, `0.0.0.0`, `::1`, `::`, IPv4-mapped forms of those): what
 * the proxy reaches there is the host's own services, not the command's own loopback.
 */
function isThisMachine(host: string): boolean {
  const name = host.startsWith("[") ? host.slice(1, host.indexOf("]")) : host.replace(/:\d+$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  if (/^127\./.test(name) || name === "0.0.0.0") return true;
  if (name === "::1" || name === "::") return true;
  // `::ffff:7f00:1` is 127.0.0.1, `::ffff:0:0` is 0.0.0.0.
  return /^::ffff:(?:7f[0-9a-f]{2}:[0-9a-f]{1,4}|0:0)$/.test(name);
}

/**
 * The allow rule that would grant `request` (without running outside the sandbox), as JSON
 * for the person's own config.
 */
export function ruleFor(request: GrantRequest): string {
  const rule: Record<string, unknown> = { action: "allow", tool: "request_permissions" };
  if (request.read.length > 0) rule.read = request.read;
  if (request.write.length > 0) rule.write = request.write;
  if (request.net.length > 0) rule.hosts = request.net;
  if (request.env.length > 0) rule.env = request.env;
  if (request.commands.length > 0) rule.commands = request.commands;
  return JSON.stringify(rule);
}

export { isInside };

function unique(paths: readonly string[]): string[] {
  return [...new Set(paths)];
}
