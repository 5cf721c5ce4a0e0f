/**
 * What a sandboxed command sees of the person's home folder: nothing but an allowlist of the
 * toolchain and cache locations builds need. Everything else there (other projects, shell
 * histories, other agents' auth files, cloud and registry credentials, browser profiles,
 * `.env` files) is invisible, whatever its name: a denylist always misses one.
 */
import { isAbsolute, isInside, join, resolve } from "../core/path.ts";

/**
 * The folders of `~/.cache` builds read, each with the tools that keep it. Not `~/.cache` whole:
 * shell histories (`~/.cache/zsh/history` in XDG setups), browsers' and mail clients' caches
 * of the pages and messages they showed live there too.
 */
const CACHE_FOLDERS: ReadonlyArray<readonly [string, string]> = [
  ["deno", "Deno's module cache (its default DENO_DIR)"],
  ["pip", "pip's wheels and HTTP cache"],
  ["uv", "uv's package cache"],
  ["pypoetry", "Poetry's packages and virtualenvs"],
  ["pipenv", "pipenv's package cache"],
  ["hatch", "Hatch's environments"],
  ["pre-commit", "pre-commit's hook environments"],
  ["go-build", "Go's build cache"],
  ["golangci-lint", "golangci-lint's analysis cache"],
  ["yarn", "yarn's package cache"],
  ["node-gyp", "Node headers for native addons"],
  ["node", "corepack's package managers"],
  ["pnpm", "pnpm's metadata cache"],
  ["esbuild", "esbuild's binaries"],
  ["ms-playwright", "Playwright's browsers"],
  ["puppeteer", "Puppeteer's browsers"],
  ["Cypress", "Cypress's app"],
  ["electron", "Electron's downloads"],
  ["prisma", "Prisma's engines"],
  ["bazel", "Bazel's output base"],
  ["bazelisk", "Bazel versions from bazelisk"],
  ["sccache", "sccache's compiler cache"],
  ["ccache", "ccache's compiler cache"],
  ["vcpkg", "vcpkg's binary cache"],
  ["coursier", "Scala and JVM artifacts from coursier"],
  ["cabal", "Haskell packages from cabal"],
  ["zig", "Zig's global cache"],
  ["huggingface/hub", "Hugging Face models (not the token beside them)"],
  ["huggingface/datasets", "Hugging Face data sets"],
  ["torch", "PyTorch hub models"],
];

/**
 * Home-relative paths shown read-only to commands, each with the reason a build needs it.
 * Secret files inside them (`.cargo/credentials`, `.config/git/credentials`, ...) stay hidden
 * by `secretLocations`.
 */
export const HOME_ALLOWLIST: ReadonlyArray<{ path: string; why: string }> = [
  ...CACHE_FOLDERS.map(([path, why]) => ({ path: `.cache/${path}`, why })),
  { path: ".npm", why: "npm's package cache and npx installs" },
  { path: ".deno", why: "deno install's bin folder" },
  { path: ".cargo", why: "cargo, rustc proxies and the crates registry" },
  { path: ".rustup", why: "Rust toolchains" },
  { path: ".local/bin", why: "tools installed per user (pipx, pip --user, uv)" },
  { path: ".local/lib", why: "pip --user packages" },
  { path: ".local/share/pnpm", why: "pnpm and its store" },
  { path: ".local/share/mise", why: "mise-managed toolchains" },
  { path: ".nvm", why: "Node versions from nvm" },
  { path: ".volta", why: "Node toolchains from volta" },
  { path: ".bun", why: "bun and its global packages" },
  { path: ".pyenv", why: "Python versions from pyenv" },
  { path: ".rbenv", why: "Ruby versions from rbenv" },
  { path: ".asdf", why: "asdf-managed toolchains" },
  { path: ".sdkman", why: "JDKs and Gradle from sdkman" },
  { path: ".ghcup", why: "Haskell toolchains" },
  { path: "go", why: "GOPATH: Go's module cache and installed tools" },
  { path: ".m2/repository", why: "Maven's artifact cache (not settings.xml: credentials)" },
  { path: ".gradle/caches", why: "Gradle's caches (not gradle.properties: credentials)" },
  { path: ".gradle/wrapper", why: "Gradle distributions the wrapper downloaded" },
  { path: ".nuget/packages", why: "NuGet's package cache" },
  { path: ".gitconfig", why: "git's user settings (name, aliases) for commits and diffs" },
  { path: ".config/git", why: "git's XDG config, ignore and attributes files" },
];

/** Options for {@linkcode homeView}. */
export interface HomeViewOptions {
  /** Home-relative or absolute (`~/` allowed) paths the person added (`sandbox.homeAllow`). */
  allow?: readonly string[];
  /** Paths the profile lets tool code read (custom profiles, grants): shown read-only too. */
  readGrants?: readonly string[];
  /** tern's own home (`TERN_HOME`): nothing inside it is shown (the plan hides it). */
  ternHome?: string;
  /**
   * The home folder of tern's user account (`passwdHome`), masked whole when it is another
   * folder than `home`: HOME may be unset or name a folder of a script's choosing. Nothing of it
   * is shown (its `.gitconfig` would keep the tokens taken out of `home`'s).
   */
  accountHome?: string;
}

/**
 * The home folder /etc/passwd (or `passwd`) gives user `uid`; undefined when it names none or
 * cannot be read. Never throws.
 */
export function passwdHome(uid: number | null, passwd = "/etc/passwd"): string | undefined {
  if (uid === null) return undefined;
  let text: string;
  try {
    text = Deno.readTextFileSync(passwd);
  } catch {
    return undefined;
  }
  for (const line of text.split("\n")) {
    const fields = line.split(":");
    if (fields.length >= 7 && /^\d+$/.test(fields[2]) && Number(fields[2]) === uid) {
      return isAbsolute(fields[5]) ? fields[5] : undefined;
    }
  }
  return undefined;
}

/**
 * The `masked` folders and `visible` paths of a shell plan for `home`: the home folder (and the
 * account's, `options.accountHome`, when it is another) masked; the allowlist, `allow` and the
 * read grants that lie in `home` shown, but never a home folder itself or a path inside tern's
 * home. Paths need not exist (the mount step skips absent ones). Never throws.
 */
export function homeView(
  home: string | undefined,
  options: HomeViewOptions = {},
): { masked: string[]; visible: string[] } {
  // A home of "/" (some containers) would mask the whole system: nothing to mask then.
  const usable = (path: string | undefined): path is string =>
    path !== undefined && isAbsolute(path) && resolve(path) !== "/";
  const masked = [...new Set([home, options.accountHome].filter(usable).map((h) => resolve(h)))];
  const inTern = (path: string) =>
    options.ternHome !== undefined && isInside(resolve(options.ternHome), path);
  const expand = (base: string, entry: string) =>
    entry === "~" ? base : entry.startsWith("~/") ? join(base, entry.slice(2)) : entry;
  const visible = [
    ...(usable(home) ? HOME_ALLOWLIST.map((entry) => join(home, entry.path)) : []),
    ...(usable(home)
      ? (options.allow ?? []).map((entry) => resolve(home, expand(home, entry)))
      : []),
    ...(options.readGrants ?? []).filter((path) => masked.some((base) => isInside(base, path))),
  ].filter((path) => !inTern(path) && !masked.some((base) => isInside(path, base)));
  return { masked, visible: [...new Set(visible)] };
}
