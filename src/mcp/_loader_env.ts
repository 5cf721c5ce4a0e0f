/**
 * Environment variables that make a program load code nobody named on its command line:
 * `NODE_OPTIONS=--require ./lib/x.js`, `PYTHONPATH`, `BASH_ENV`, `LD_PRELOAD`, `PATH` (which
 * `node` runs). Trust pins the files a project MCP server's command line names; a server whose
 * `env` sets one of these would run a workspace file trust never pinned, so it is never trusted.
 */

/** Names refused whole. */
const NAMES = new Set([
  "PATH",
  "HOME",
  "ENV",
  "BASH_ENV",
  "SHELLOPTS",
  "BASHOPTS",
  "PS4",
  "ZDOTDIR",
  "CLASSPATH",
  "GEM_HOME",
  "GEM_PATH",
  "BUNDLE_GEMFILE",
  "PHPRC",
  "PHP_INI_SCAN_DIR",
  "TCLLIBPATH",
]);
/**
 * Prefixes refused: interpreters', loaders' and package managers' own variables (`NODE_*` but
 * `NODE_ENV`, `PYTHON*`, `LD_*`, `DENO_*`, `npm_config_*`, `XDG_*` which moves their config),
 * and libraries' that load a module they name: `OPENSSL_CONF` makes Node and Python load the
 * shared library its file names as a provider, `DOTNET_STARTUP_HOOKS` an assembly.
 */
const PREFIXES =
  /^(?:NODE_(?!ENV$)|PYTHON|PERL|RUBY|LUA_|LD_|DYLD_|DENO_|BUN_|NPM_|YARN_|PNPM_|COREPACK_|GIT_|JAVA|_JAVA|JDK_|R_|TS_NODE_|TSX_|UV_|PIP_|VIRTUAL_ENV|CONDA|XDG_|GCONV|GLIBC_|MALLOC_|OPENSSL_|DOTNET_|CORECLR_|COMPLUS_|JULIA_|ERL_|GUILE_)/i;

/**
 * The names among `names` (an MCP server's `env`) that may make its program load other code,
 * in order; empty when none does.
 */
export function loaderVariables(names: Iterable<string>): string[] {
  return [...names].filter((name) => NAMES.has(name.toUpperCase()) || PREFIXES.test(name));
}
