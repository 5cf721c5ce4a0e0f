/** The environment shell commands see: an allowlist, minus anything that injects code. */
import { safeEnv } from "./process.ts";
import { SecretMasker } from "./secrets.ts";

/**
 * Names that turn a shell or the tools it starts into a code runner: preloads and library
 * paths, bash's startup files and exported functions, git's config, dir and exec path, and
 * interpreters' option and path variables.
 */
const INJECTING: readonly RegExp[] = [
  /^LD_/,
  /^BASH_ENV$/,
  /^ENV$/,
  /^BASH_FUNC_/,
  /^PROMPT_COMMAND$/,
  /^SHELLOPTS$/,
  /^BASHOPTS$/,
  /^GIT_/,
  /^NODE_OPTIONS$/,
  /^PYTHONSTARTUP$/,
  /^PYTHONPATH$/,
  /^PERL5OPT$/,
  /^PERL5LIB$/,
  /^RUBYOPT$/,
  /^DENO_/,
];

/**
 * Whether variable `name` injects code into the shell or the tools it runs (`LD_PRELOAD`,
 * `BASH_ENV`, `GIT_CONFIG_*`, `NODE_OPTIONS`, `DENO_*`, …). Such a variable never passes into
 * a shell command, whatever a profile or plan says.
 */
export function isInjectingName(name: string): boolean {
  return INJECTING.some((pattern) => pattern.test(name));
}

/** Variable names that look like they hold a secret. */
const SECRET_NAME =
  /KEY|TOKEN|SECRET|PASS|CREDENTIAL|CREDS|AUTH|COOKIE|SESSION|PRIVATE|PAT$|DSN|SALT/i;

/** Whatever the name, a value the masker would hide is a secret (made at the first check). */
let valueMasker: SecretMasker | undefined;

/**
 * Why variable `name`, holding `value` where tern reads it, never passes into a shell command,
 * whatever a profile or a grant names; undefined when it may. A variable that loads code
 * ({@linkcode isInjectingName}) never does, nor one whose name or value looks like a secret: a
 * format the masker knows (keys, tokens, a URL with a password) or, unless it is a list of
 * absolute paths, a long word of letters and digits, as random tokens are. A name says little
 * (`DEPLOY_X` may hold a token); a false alarm only keeps a variable from commands.
 */
export function unpassableReason(name: string, value?: string): string | undefined {
  if (isInjectingName(name)) return "it makes the shell or the programs it runs load other code";
  if (SECRET_NAME.test(name)) return "its name says it holds a secret";
  if (value === undefined) return undefined;
  valueMasker ??= new SecretMasker();
  const pathList = value.split(":").every((part) => part.startsWith("/"));
  const randomWord = /(?:^|\s)(?=\S*[A-Za-z])(?=\S*[0-9])\S{16,}/.test(value);
  if (valueMasker.mask(value) !== value || (!pathList && randomWord)) {
    return "its value looks like a secret (a key, a token or a password)";
  }
  return undefined;
}

/**
 * The environment for shell commands: from `source` (default: this process's environment)
 * only PATH, HOME, LANG, LC_*, TERM, TZ and USER (see `safeEnv`: a name that looks secret
 * never passes, PATH gets a default), never a name for which {@linkcode isInjectingName} holds,
 * and always `SHELL=/bin/bash` and `TMPDIR=/tmp` (the sandbox's private tmp).
 */
export function shellEnv(source?: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(safeEnv(source && { ...source }))) {
    if (!isInjectingName(name)) env[name] = value;
  }
  env.SHELL = "/bin/bash";
  env.TMPDIR = "/tmp";
  return env;
}

/**
 * Proxy and certificate-authority variables: what a program needs to reach the network behind a
 * corporate proxy or a TLS-intercepting one (a custom CA). Not secrets; passed, in upper and
 * lower case, to commands that have the network and to MCP servers (an `npx` or `deno run npm:`
 * server must start behind a proxy).
 */
export const NETWORK_ENV_NAMES: readonly string[] = [
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_EXTRA_CA_CERTS",
  "DENO_CERT",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
].flatMap((name) => [name, name.toLowerCase()]);

/**
 * The {@linkcode NETWORK_ENV_NAMES} set in `source`, without credentials: a proxy URL's user
 * and password (`http://me:<password>@proxy:3128`) are taken out, and a value that still looks
 * like a secret (a token in its query) is left out. What reads these variables (a command with
 * the network, an MCP server) could send a proxy password anywhere, or print it in a form no
 * masker knows; behind a proxy that needs one, give it to that program yourself.
 */
export function networkEnv(source: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = {};
  valueMasker ??= new SecretMasker();
  for (const name of NETWORK_ENV_NAMES) {
    const value = /proxy$/i.test(name) ? source[name]?.replace(URL_USER_PART, "$1") : source[name];
    if (value !== undefined && valueMasker.mask(value) === value) env[name] = value;
  }
  return env;
}

/**
 * The user part of a URL or of a bare `host:port` (`user:pass@`, up to the last `@` before the
 * path), with the scheme before it kept in group 1. In each entry of a list (`NO_PROXY`) too.
 */
const URL_USER_PART = /(^|,|\s|[a-z][a-z0-9+.-]*:\/\/)[^/?#\s,]*@/gi;
