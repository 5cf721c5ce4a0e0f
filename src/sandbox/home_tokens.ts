/**
 * The home configuration files commands see for their tools' sake (git's, cargo's, the npmrc of
 * nvm's Node versions: see home_view.ts) can hold tokens: a `url."https://oauth2:<token>@host/"`,
 * an `http.extraHeader`, a registry `token`, an `_authToken`. Where one of them holds something
 * that looks like a secret, commands see a copy with those values replaced, bound over the file;
 * the rest of it (name, aliases, mirrors) is unchanged, so tools keep working.
 */
import { fnv1aHex } from "../core/fnv.ts";
import { join } from "../core/path.ts";
import { openUnchanged } from "../core/verified_open.ts";
import { SecretMasker } from "./secrets.ts";

/** Home-relative configuration files of the home allowlist that tools read tokens from. */
export const TOKEN_CONFIG_FILES: readonly string[] = [
  ".gitconfig",
  ".config/git/config",
  ".cargo/config.toml",
  ".cargo/config",
];

/** nvm's Node versions, each of which may have a global `etc/npmrc`. */
const NVM_VERSIONS = ".nvm/versions/node";

/**
 * Larger files are not read: commands see {@linkcode TOO_LARGE} instead (a config file that size
 * is not one tern can vouch for).
 */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** What commands see of a configuration file over {@linkcode MAX_CONFIG_BYTES}. */
const TOO_LARGE = "# tern: this file is larger than 1 MiB, so it is not shown to commands\n";

/** What stands in a copy where a value was taken out. */
export const TOKEN_MARK = "[REDACTED]";

/**
 * A key whose value is a credential in git, cargo, npm and INI-like files: `extraHeader`,
 * `token`, `_authToken`, `_auth`, `_password`, `smtpPass`, `secret`, `apiKey`, ... (its last
 * part after `.`, `:` or `/`, case aside).
 */
const SECRET_CONFIG_KEY =
  /(?:^|[.:/])(?:[\w-]*(?:token|pass(?:w(?:or)?d)?|secret|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)|_auth|extra-?header|authorization)$/i;

/**
 * A value that is one word of token characters, 24 or more, with a lower-case letter, an
 * upper-case one and a digit, quoted or not: a random token whatever its key is called
 * (`[hub] key = …`). Paths, URLs, target triples, hex hashes and UUIDs are none.
 */
const RANDOM_WORD = /^(["']?)(?=[\w-]*[a-z])(?=[\w-]*[A-Z])(?=[\w-]*\d)[\w-]{24,}\1$/;

/** `key = value` or `key=value` (gitconfig, TOML, npmrc, INI), with its parts. */
const KEY_VALUE = /^(?<head>\s*(?<key>[^\s=#;[]+)\s*=\s*)(?<value>.*?)(?<tail>\s*)$/;

/**
 * A URL's user part without a password that looks like a token (`https://<token>@host`): at
 * least 16 characters, letters and digits both. `git@`, `me@` stay.
 */
const URL_USER = /(?<head>[a-z][a-z0-9+.-]*:\/\/)(?<user>[^\s/:@'"]{16,})@/gi;

const formats = new SecretMasker();

/**
 * `text` (a configuration file) with every credential taken out: values under a key that names
 * one, a URL's password or token-like user, and what the secret masker's formats find anywhere.
 * A value ends where the file's format ends it: at its closing quote (what follows, a comment,
 * stays), at the end of a TOML `"""` or `'''` string, or at the last line a trailing `\`
 * continues (git); quotes around it are kept, so the file still parses. Never throws.
 */
export function redactConfigText(text: string): string {
  const lines = text.split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const parts = KEY_VALUE.exec(lines[i])?.groups;
    const key = parts?.key.replace(/^["']|["']$/g, "");
    if (
      parts === undefined || parts.value === "" ||
      !(SECRET_CONFIG_KEY.test(key!) || RANDOM_WORD.test(parts.value))
    ) {
      out.push(lines[i]);
      continue;
    }
    const value = parts.value + parts.tail;
    const triple = /^(?:"""|''')/.exec(value)?.[0];
    if (triple !== undefined) {
      // To the closing triple, on this line or a later one; the lines between go.
      let rest = value.slice(3);
      let at = rest.indexOf(triple);
      while (at === -1 && i + 1 < lines.length) {
        rest = lines[++i];
        at = rest.indexOf(triple);
      }
      out.push(
        `${parts.head}${triple}${TOKEN_MARK}${triple}${at === -1 ? "" : rest.slice(at + 3)}`,
      );
      continue;
    }
    const quote = /^["']/.exec(value)?.[0];
    const end = quote === undefined ? -1 : closingQuote(value, quote);
    if (quote !== undefined && end !== -1) {
      out.push(`${parts.head}${quote}${TOKEN_MARK}${quote}${value.slice(end + 1)}`);
      continue;
    }
    // To the line's end, and through the lines a trailing backslash continues it onto.
    while (lines[i].replace(/\r$/, "").endsWith("\\") && i + 1 < lines.length) i++;
    const cr = lines[i].endsWith("\r") ? "\r" : "";
    out.push(`${parts.head}${quote ?? ""}${TOKEN_MARK}${quote ?? ""}${cr}`);
  }
  const users = out.join("\n").replace(
    URL_USER,
    (match, head: string, user: string) =>
      /[a-z]/i.test(user) && /\d/.test(user) ? `${head}${TOKEN_MARK}@` : match,
  );
  return formats.mask(users);
}

/**
 * Where the quoted string that `value` starts with ends (the index of its closing `quote`), or -1
 * when it does not end on this line. In `"…"` a backslash escapes the next character (git, TOML);
 * a `'…'` string has no escapes (TOML's literal strings).
 */
function closingQuote(value: string, quote: string): number {
  for (let i = 1; i < value.length; i++) {
    if (quote === '"' && value[i] === "\\") i++;
    else if (value[i] === quote) return i;
  }
  return -1;
}

/** A copy made for one version of one file. */
interface Copy {
  /** `dev:ino:size:mtime` of the file it was made from. */
  version: string;
  /** That file's real path. */
  real: string;
  /** The copy's path, or null: the file holds nothing to take out. */
  copy: string | null;
}

/**
 * The token configuration files under `home` that exist, by their real paths, each with the copy
 * commands see instead: `{}` when none holds a credential. Copies are written to `dir` (a folder
 * commands cannot write: tern's home or its private filter folder), named by the file and its
 * content, and made again only when the file changes. A file inside one of `writable` (a
 * workspace in the home folder holding one, through a link) is opened without following links
 * or blocking. Never throws: a file that cannot be read or copied is left as it is.
 */
export class HomeTokenCopies {
  readonly #dir: string;
  readonly #made = new Map<string, Copy>();
  /**
   * Where the last look found a candidate (or nvm's versions folder) missing: the folder that
   * lacked its next part, and that folder's change stamp then, kept only once the folder has
   * settled (see `settled`). While the stamp holds, it is still missing (a name made or renamed
   * into a folder changes its times), and nothing that would fail is looked up again: a failed
   * lookup costs tens of microseconds before every command.
   */
  readonly #missing = new Map<string, { dir: string; stamp: string }>();
  /** The folders' stamps read during one {@linkcode HomeTokenCopies.for}. */
  readonly #stamps = new Map<string, Stamp | null>();
  /** nvm's versions folder as last listed, by its stamp. */
  #versions: { stamp: string; names: string[] } | undefined;

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** See the class: for the plan about to be built. */
  for(home: string | undefined, writable: readonly string[]): Record<string, string> {
    if (home === undefined) return {};
    const replaced: Record<string, string> = {};
    this.#stamps.clear();
    for (const path of this.#candidates(home)) {
      const copy = this.#copyOf(path, writable);
      if (copy !== null) replaced[copy.real] = copy.copy;
    }
    return replaced;
  }

  #copyOf(path: string, writable: readonly string[]): { real: string; copy: string } | null {
    // A file found by the same lstat as before is the same file at the same real path (the
    // real path is looked up again only for a link, whose target may change).
    let at: Deno.FileInfo;
    let info: Deno.FileInfo;
    let real: string;
    try {
      at = Deno.lstatSync(path);
      info = at.isSymlink ? Deno.statSync(path) : at;
      const known = this.#made.get(path);
      real = known !== undefined && !at.isSymlink && known.version === versionOf(at)
        ? known.real
        : Deno.realPathSync(path);
    } catch {
      return null;
    }
    if (!info.isFile || info.size === 0) return null;
    const version = versionOf(info);
    const known = this.#made.get(path);
    if (known?.version === version && known.real === real) {
      return known.copy === null ? null : { real, copy: known.copy };
    }
    const large = info.size > MAX_CONFIG_BYTES;
    const text = large ? TOO_LARGE : readConfig(real, info, writable);
    if (text === null) return null;
    const shown = large ? TOO_LARGE : redactConfigText(text);
    const copy = !large && shown === text ? null : this.#write(real, shown);
    // The copy of the file's last version goes (a sandbox that bound it keeps it while it runs).
    // At once, not in the background: the next look must not find it (it is rare, one unlink).
    if (known?.copy && known.copy !== copy) removeQuietly(known.copy);
    // A file changed a moment ago may change again with the same time: read again next time.
    this.#made.set(path, { version: settled(info) ? version : "", real, copy });
    return copy === null ? null : { real, copy };
  }

  #write(real: string, text: string): string | null {
    const name = `home-config-${fnv1aHex(`${real}\0${text}`)}`;
    const copy = join(this.#dir, name);
    // Written whole, then renamed into place: another run sharing tern's home may be binding
    // the same copy.
    const part = `${copy}.${Deno.pid}.part`;
    try {
      Deno.writeTextFileSync(part, text, { mode: 0o600 });
      Deno.renameSync(part, copy);
      return copy;
    } catch {
      Deno.remove(part).catch(() => {});
      return null;
    }
  }
  /** The candidate files that exist: {@linkcode TOKEN_CONFIG_FILES}, each nvm Node's `etc/npmrc`. */
  #candidates(home: string): string[] {
    const found = TOKEN_CONFIG_FILES.filter((relative) => this.#exists(home, relative))
      .map((relative) => join(home, relative));
    if (!this.#exists(home, NVM_VERSIONS)) return found;
    const versions = join(home, NVM_VERSIONS);
    const stamp = this.#stampOf(versions);
    if (stamp === null) return found;
    let names = this.#versions?.stamp === stamp.key ? this.#versions.names : undefined;
    if (names === undefined) {
      try {
        names = [...Deno.readDirSync(versions)].map((e) => e.name);
      } catch {
        return found;
      }
      this.#versions = stamp.settled ? { stamp: stamp.key, names } : undefined;
    }
    for (const name of names) {
      const relative = `${NVM_VERSIONS}/${name}/etc/npmrc`;
      if (this.#exists(home, relative)) found.push(join(home, relative));
    }
    return found;
  }

  /** Whether `relative` (to `home`) exists, looked up part by part only when it may have come. */
  #exists(home: string, relative: string): boolean {
    const path = join(home, relative);
    const known = this.#missing.get(path);
    if (known !== undefined && this.#stampOf(known.dir)?.key === known.stamp) return false;
    this.#missing.delete(path);
    try {
      Deno.lstatSync(path);
      return true;
    } catch {
      // Missing: which folder lacks its next part is what the next look checks.
    }
    let dir = home;
    for (const part of relative.split("/")) {
      const next = join(dir, part);
      try {
        Deno.lstatSync(next);
      } catch {
        // Kept only for a folder that has not changed for a while: a name made in it within
        // its times' granularity of this look would not change them.
        const stamp = this.#stampOf(dir);
        if (stamp?.settled) this.#missing.set(path, { dir, stamp: stamp.key });
        return false;
      }
      dir = next;
    }
    return true;
  }

  /**
   * A folder's inode, modification and change times and size, links followed (read once per
   * look), and whether it last changed long enough ago to be trusted; null when it is gone.
   */
  #stampOf(dir: string): Stamp | null {
    let stamp = this.#stamps.get(dir);
    if (stamp !== undefined) return stamp;
    try {
      const info = Deno.statSync(dir);
      const key = `${info.ino}:${info.mtime?.getTime()}:${info.ctime?.getTime()}:${info.size}`;
      stamp = { key, settled: settled(info) };
    } catch {
      stamp = null;
    }
    this.#stamps.set(dir, stamp);
    return stamp;
  }
}

/** A folder's stamp (see `HomeTokenCopies.#stampOf`). */
interface Stamp {
  key: string;
  settled: boolean;
}

/**
 * How long after a change a file's or folder's times are trusted to tell a later change: a file
 * system may keep them in whole seconds, and a change within one look's millisecond leaves them
 * as they were (git's "racy" entries).
 */
const SETTLE_MS = 2_000;

/** Whether `info` last changed (content or entries, or its inode) more than SETTLE_MS ago. */
function settled(info: Deno.FileInfo): boolean {
  const changed = Math.max(info.mtime?.getTime() ?? Infinity, info.ctime?.getTime() ?? Infinity);
  return changed < Date.now() - SETTLE_MS;
}

/** `dev:ino:size:mtime`: a file's version, for its copy. */
function versionOf(info: Deno.FileInfo): string {
  return `${info.dev}:${info.ino}:${info.size}:${info.mtime?.getTime()}`;
}

/**
 * The text of `real`, or null. Inside a writable root a command could swap it for a FIFO: opened
 * without blocking, and only while it is still the file `info` described.
 */
function readConfig(real: string, info: Deno.FileInfo, writable: readonly string[]): string | null {
  const decoder = new TextDecoder();
  try {
    if (!writable.some((root) => root === "/" || real.startsWith(`${root}/`))) {
      return decoder.decode(Deno.readFileSync(real));
    }
    const file = openUnchanged(real, info);
    if (file === null) return null;
    try {
      return decoder.decode(file.readAll());
    } finally {
      file.close();
    }
  } catch {
    return null;
  }
}

/** Removes a file; nothing when it cannot (gone already). */
function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path);
  } catch {
    // Gone already.
  }
}
