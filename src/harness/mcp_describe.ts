/**
 * What an MCP server runs, as a person reads it before trusting it (`tern mcp trust`, `/mcp`).
 * Everything that decides what runs or where it connects is shown; credentials are not, since
 * the text stays in terminals, scrollback and logs: a credential `env` entry or header shows the
 * `${VAR}` references it is made of and the length of what the file writes literally, and a
 * known key format anywhere else is masked. Whatever is hidden, the text says where to read it.
 */
import {
  type McpServerConfig,
  SECRET_ENV_NAME,
  SECRET_HEADER_NAME,
  WORKSPACE_PIN,
} from "../mcp/types.ts";
import { SecretMasker } from "../sandbox/secrets.ts";
import { shellJoin } from "../core/shell_join.ts";
import { visibleText } from "../core/terminal_text.ts";

/**
 * The formats of common keys only: a known value taken from the definition itself would let a
 * repository hide any part of its command line by writing the same text as a "secret".
 */
const KEY_FORMATS = new SecretMasker();

/** A `${NAME}` or `${NAME:-default}` reference (see mcp/_config_values.ts). */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** An authorization scheme that starts a credential: no secret, and it tells the kind. */
const SCHEME = /^(?:Bearer|Basic|Token|Bot|Digest)[ \t]+/i;

/** Literal text that cannot carry a secret: separators between references. */
const SEPARATORS = /^[\s:;,./_-]*$/;

/** `user:password@` in a URL: the password part. */
const URL_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^/?#@:]*:)([^/?#@]*)@/i;

/**
 * What a server runs or where it connects, as a person checks it before trusting: for a stdio
 * server also its working folder and, in bubblewrap, the folders it may write; for a project's
 * server each `env` and header value as written, so a `${VAR}` it passes on shows, with the
 * literal text of credentials (by their name: `API_TOKEN`, `Authorization`) replaced by its
 * length and key formats (`ghp_…`, `sk-…`) masked wherever they occur.
 */
export function describeServer(server: McpServerConfig): string {
  let hidden = false;
  const masked = (text: string): string => {
    const shown = KEY_FORMATS.mask(text);
    if (shown !== text) hidden = true;
    return shown;
  };
  let what: string;
  if (server.transport === "http") {
    what = withoutPassword(server.url!);
    if (what !== server.url) hidden = true;
    what = masked(what);
  } else {
    what = masked(shellJoin([server.command!, ...server.args]));
  }
  const quoted = (paths: readonly string[]) => paths.map((path) => `"${masked(path)}"`).join(", ");
  const names = (
    label: string,
    record: Record<string, string>,
    secret: RegExp,
    written?: typeof record,
  ) => {
    const keys = Object.keys(record);
    if (keys.length === 0) return "";
    const shown = written === undefined ? keys : keys.map((key) => {
      const text = written[key] ?? "";
      const value = secret.test(key) ? credential(text) : masked(text);
      if (value !== text) hidden = true;
      return `${key}=${JSON.stringify(value)}`;
    });
    return `; ${label} ${shown.join(", ")}`;
  };
  const cwd = server.cwd === undefined ? "" : `; working folder ${quoted([server.cwd])}`;
  const env = names("env", server.env, SECRET_ENV_NAME, server.written?.env);
  const headers = names("headers", server.headers, SECRET_HEADER_NAME, server.written?.headers);
  const sandbox = server.sandbox
    ? `; writable ${quoted(server.sandbox.writable)}; in bubblewrap${
      server.sandbox.network ? " with the network" : ""
    }`
    : "";
  const files = Object.keys(server.files ?? {}).filter((name) => name !== WORKSPACE_PIN);
  const runs = files.length > 0 ? `; runs ${quoted(files)}` : "";
  const whole = server.files?.[WORKSPACE_PIN] === undefined
    ? ""
    : "; any file of the workspace it may load, so any change there needs trust again";
  // Said last, after every masked part: a repository may make text look like a key, and the
  // person must know that something is not shown and where to read it.
  const note = hidden
    ? `; values that look secret are not shown: read "${server.key}" in that file for them`
    : "";
  // Made visible whole: a project's command, argument or file name with an escape sequence or
  // a line break could otherwise hide part of what runs from the screen that asks for trust.
  return visibleText(
    `${what} (from ${server.file}${cwd}${env}${headers}${sandbox}${runs}${whole}${note})`,
  );
}

/**
 * A credential's value as written, for the trust text: its `${VAR}` references (where the
 * value comes from) and a leading scheme (`Bearer `) as they are, every other literal character
 * (a key written into the file, a reference's default) as `<N chars hidden>`.
 */
function credential(written: string): string {
  let shown = "";
  let position = 0;
  for (const match of written.matchAll(REFERENCE)) {
    shown += literal(written.slice(position, match.index), position === 0);
    const [reference, name, fallback] = match;
    shown += fallback === undefined ? reference : `\${${name}:-${literal(fallback, false)}}`;
    position = match.index + reference.length;
  }
  return shown + literal(written.slice(position), position === 0);
}

function literal(text: string, leading: boolean): string {
  if (SEPARATORS.test(text)) return text;
  const scheme = leading ? SCHEME.exec(text)?.[0] ?? "" : "";
  const rest = text.length - scheme.length;
  return rest === 0 ? scheme : `${scheme}<${rest} char${rest === 1 ? "" : "s"} hidden>`;
}

function withoutPassword(url: string): string {
  return url.replace(
    URL_PASSWORD,
    (whole, head: string, password: string) =>
      password === "" ? whole : `${head}<${password.length} chars hidden>@`,
  );
}
