/**
 * What a sandboxed command sees of the person's home folder: nothing but an allowlist of the
 * toolchain and cache locations builds need. Everything else there (other projects, shell
 * histories, other agents' auth files, cloud and registry credentials, browser profiles,
 * `.env` files) is invisible, whatever its name: a denylist always misses one.
 */
import { isAbsolute, join, resolve } from "../core/path.ts";

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
}

/**
 * The `masked` folders and `visible` paths of a shell plan for `home`: the home folder masked;
 * the allowlist, `allow` and those read grants that lie in the home folder shown, but never
 * the home folder itself or a path inside tern's home. Paths need not exist (the mount step
 * skips absent ones). Never throws.
 */
export function homeView(
  home: string | undefined,
  options: HomeViewOptions = {},
): { masked: string[]; visible: string[] } {
  // A home of "/" (some containers) would mask the whole system: nothing to mask then.
  if (home === undefined || !isAbsolute(home) || resolve(home) === "/") {
    return { masked: [], visible: [] };
  }
  const masked = [resolve(home)];
  const expand = (entry: string) =>
    entry === "~" ? home : entry.startsWith("~/") ? join(home, entry.slice(2)) : entry;
  const inTern = (path: string) =>
    options.ternHome !== undefined && isInside(path, resolve(options.ternHome));
  const visible = [
    ...HOME_ALLOWLIST.map((entry) => join(home, entry.path)),
    ...(options.allow ?? []).map((entry) => resolve(home, expand(entry))),
    ...(options.readGrants ?? []).filter((path) => isInside(path, resolve(home))),
  ].filter((path) => !inTern(path) && !isInside(resolve(home), path));
  return { masked, visible: [...new Set(visible)] };
}

function isInside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}
