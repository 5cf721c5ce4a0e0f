/**
 * The checks that decide, from what stands around a match, whether a credential-shaped match of
 * {@linkcode SecretMasker} (secrets.ts) is a secret: the name an assignment gives its value
 * (`DB_PASSWORD=hunter2`, `password: hunter2`, `?token=ab`, `--api-key x`) and the program a
 * command-line option belongs to (`curl -u alice:pw`, `mysql -pS3cret`, not `docker run -u
 * 1000:1000`). Each check reads a few characters around its match, and the program words of a
 * text are read once, in order, so masking stays linear.
 */

/** A match of a format, with what a check may read around it. */
export interface Found {
  /** The whole text being masked, and where the match starts in it. */
  text: string;
  start: number;
  match: string;
  /** The part the format would mask, and where it ends in `text`. */
  secret: string;
  end: number;
  /** Whether a quote stands right before the secret. */
  quoted: boolean;
  /** The format's named groups (without their index). */
  groups: Record<string, string | undefined>;
  /** The program words of the command the match is in, before it (lower-cased). */
  programs(): ReadonlySet<string>;
}

/** Random-looking: a letter and a digit. Identifiers, type names and words rarely have both. */
export function looksRandom(secret: string): boolean {
  return /[A-Za-z]/.test(secret) && /[0-9]/.test(secret);
}

/**
 * Values that name no secret even under a secret's name: booleans and empty markers, type names
 * (`password: string`, `token: str`), fetch's `credentials` modes and auth schemes, and the
 * placeholders an example file gives (`TERN_API_KEY=changeme` in `.env.example`).
 */
const PLAIN_WORDS = new Set([
  "changeme",
  "change-me",
  "placeholder",
  "your-api-key",
  "your-token",
  "xxx",
  "xxxx",
  "todo",
  "true",
  "false",
  "yes",
  "no",
  "on",
  "off",
  "null",
  "nil",
  "none",
  "undefined",
  "required",
  "optional",
  "str",
  "string",
  "bytes",
  "int",
  "integer",
  "number",
  "bool",
  "boolean",
  "any",
  "unknown",
  "object",
  "secretstr",
  "include",
  "omit",
  "same-origin",
  "env",
  "auto",
  "default",
  "await",
  "new",
  "typeof",
  "return",
]); // deno-fmt-ignore

/**
 * Whether `value`, bare or quoted under a secret's name, may be the secret. Not: a reference
 * (`$X`, `${{ secrets.X }}`, `%X%`, a YAML alias `*x` or tag `!x`), a number of fewer than 8
 * digits (counts, limits, ports and flags: `MAX_TOKEN=4096`, `AUTH=0`; a PIN that short has too
 * few values for hiding it to protect much), punctuation alone (`...`, `***`, `|`), a plain word
 * ({@linkcode PLAIN_WORDS}), a path (`GOOGLE_APPLICATION_CREDENTIALS=/etc/key.json` names where
 * the secret is) or a URL (its password is a format of its own).
 */
function mayBeSecret(value: string): boolean {
  return !/^[$%*!]/.test(value) && !/^\d{1,7}$/.test(value) && /[\p{L}\p{N}]/u.test(value) &&
    !PLAIN_WORDS.has(value.toLowerCase()) && !/^(?:~|\.{1,2})?\/(?:[\w.-]+\/)*[\w.-]*$/.test(value) &&
    !value.includes("://");
}

/** An identifier or a member chain (`getToken`, `this.options.token`, `args.password`). */
const CHAIN = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/;
const NAME_CHAR = /[\w.-]/;

/**
 * Whether the value a secret's name is given (`(?<k>…)` the name's last word, `(?<s>…)` the
 * separator) is a secret. A quoted value is, and a bare one that looks random (8 characters or
 * more, a letter and a digit). Other bare values only where a config or a command gives them:
 * in a URL's query (`?token=ab`, `&sig=…`), to a command-line option (`--api-key x`), in `NAME=x`
 * followed by a blank, a line end or a shell operator (`PGPASSWORD=x psql`), and in `name: x` or
 * `name = x` that ends its line (YAML, INI, TOML). Code, whose values are names and calls
 * (`token = getToken()`, `token: this.options.token,`, `password: string;`), stays.
 */
export function acceptAssigned(found: Found): boolean {
  const { text, start, secret, quoted } = found;
  const keyword = (found.groups.k ?? "").toLowerCase();
  let nameStart = start;
  while (nameStart > 0 && start - nameStart < 128 && NAME_CHAR.test(text[nameStart - 1])) {
    nameStart--;
  }
  const name = text.slice(nameStart, start + keyword.length);
  const before = text[nameStart - 1] ?? "";
  if (!partOfName(keyword, name)) return false;
  const old = !/^(?:auth|sig|signature|pass|pwd|passphrase|credentials?)$/.test(keyword);
  if (old && secret.length >= 8 && (quoted || looksRandom(secret))) return true;
  // In a URL's query every value is data, never code or a reference: any length is masked.
  if (before === "?" || before === "&") return true;
  if (!mayBeSecret(secret)) return false;
  // `auth: basic`, `AUTH=oauth2`: a scheme, a word in one case; not a credential
  // (`_auth=dXNlcjpwYXNz`, `user:pw`).
  if (keyword === "auth" && /^[A-Za-z]?[a-z]*\d?$/.test(secret)) return false;
  if (keyword === "sig" || keyword === "signature") return false;
  const separator = found.groups.s ?? "";
  if (/^--?[A-Za-z]/.test(name)) return optionTakesValue(name, separator, found);
  if (quoted) return true;
  const next = text[found.end] ?? "";
  // A call, an index, a member chain; a value that holds another assignment
  // (`password=password=…`) is text about them, not one.
  if (/[(\[<{.]/.test(next) || CHAIN.test(secret) || /=[^=]/.test(secret)) return false;
  // A function's or a variable's name (`token=getToken`, `password: userPassword`).
  if (/^[a-z]+(?:[A-Z][a-z]{2,})+$/.test(secret)) return false;
  const word = name.replace(/^.*[._-]/, "").toLowerCase();
  if (secret.toLowerCase() === word || secret.toLowerCase() === name.toLowerCase()) return false;
  if (/^["']?=$/.test(separator)) {
    // `NAME=x` in a shell line or an env file; lower-case names end at a blank only, so that
    // minified code (`e.token=t;`) stays.
    const shell = /^[A-Z0-9_]+$/.test(name) ? /^(?:[\s"'&|;)]|$)/ : /^(?:[\s"'&|]|$)/;
    return shell.test(next);
  }
  if (/^(?:self|this|cls)\./.test(name) || before === "@") return false;
  // A type after a colon: `token: Token`, `password: SecretStr`.
  if (separator.includes(":") && /^[A-Z][A-Za-z]*$/.test(secret)) return false;
  // A snake_case variable (`password = user_password`): masked, the line could not be edited.
  if (/^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/.test(secret)) return false;
  return endsLine(text, found.end);
}

/**
 * Whether `keyword` is a word of `name` of its own, as these keywords need: `auth` (not
 * `AUTHOR`, `oauth`; `OAUTH_CLIENT_ID` names no secret: a client id is public), `pass` and `pwd`
 * after a separator (`DB_PASS`, `MYSQL_PWD`; not `bypass`, `PWD`, `OLDPWD`).
 */
function partOfName(keyword: string, name: string): boolean {
  const at = name.length - keyword.length;
  const prior = name[at - 1] ?? "";
  if (keyword === "pass" || keyword === "pwd") return prior === "_" || prior === "-";
  if (keyword === "auth") {
    return prior === "" || /[_.-]/.test(prior) || (/[a-z]/.test(prior) && name[at] === "A");
  }
  return true;
}

/** Whether only blanks, a closing quote or a `#` comment follow `end` on its line. */
function endsLine(text: string, end: number): boolean {
  let i = end;
  if (text[i] === '"' || text[i] === "'") i++;
  while (text[i] === " " || text[i] === "\t") i++;
  return i >= text.length || text[i] === "\n" || text[i] === "\r" || text[i] === "#";
}

/**
 * Programs whose `--password` takes no value after a blank (it asks, or the value must be
 * attached: `mysql --password db`, `psql --password db`): the word after it is no secret.
 */
const ASKING_PROGRAMS = /^(?:mysql|mariadb|psql|pg_|createdb|dropdb|createuser|dropuser|vacuumdb)/;

/** A command-line option given a secret: not one that turns a secret off or asks for it. */
function optionTakesValue(name: string, separator: string, found: Found): boolean {
  if (/^--?(?:no|ask|prompt|skip|without|show|print|generate|require)[-_]/i.test(name)) {
    return false;
  }
  if (!/^[ \t]+$/.test(separator) || !/passw(?:or)?d$/i.test(name)) return true;
  return ![...found.programs()].some((program) => ASKING_PROGRAMS.test(program));
}

/** `mysql`, `mysqldump`, `mariadb-dump`, …: only an attached `-pS3cret` is a password. */
const MYSQL = /^(?:mysql|mariadb)/;
/** `-p secret` and `-psecret`: the MongoDB tools, sshpass, and `docker login` and the like. */
const PASSWORD_P = /^(?:mongo\w*|sshpass)$/;
const LOGIN_P = /^(?:docker|podman|nerdctl|buildah)$/;
/** `-a secret`: redis-cli, and HTTPie's `-a user:password`. */
const PASSWORD_A = /^(?:redis-cli|http|https|xh|xhs)$/;

/**
 * Whether a `-p` or `-a` option's value (`(?<o>…)` the option, `(?<s>…)` the blanks after it)
 * is a password, by the program: `mysql -pS3cret` (not `mysql -p db`, which asks), `mongosh -p
 * x`, `sshpass -p x`, `docker login -p x`, `redis-cli -a x`; not `mkdir -p`, `ls -p`, `tar -p`,
 * `grep -p`, `docker run -p 80:80`.
 */
export function acceptPasswordOption(found: Found): boolean {
  const attached = (found.groups.s ?? "") === "";
  if (!attached && found.secret.startsWith("-")) return false;
  const programs = [...found.programs()];
  if (found.groups.o === "-a") return programs.some((program) => PASSWORD_A.test(program));
  if (attached && programs.some((program) => MYSQL.test(program))) return true;
  if (programs.some((program) => PASSWORD_P.test(program))) return true;
  return programs.includes("login") && programs.some((program) => LOGIN_P.test(program));
}

/** Programs that take `-U user%password`. */
const SMB = /^(?:smbclient|rpcclient|smbcacls|smbget|smbmap)$/;

/**
 * Whether a user option's value (`(?<u>…)` the user and its `:` or `%`) holds a password, by the
 * program: curl's `-u`/`--user`/`-U`/`--proxy-user user:password`, Samba's `-U user%password`;
 * not `docker run -u 1000:1000`, `ps -u root`.
 */
export function acceptUserOption(found: Found): boolean {
  const programs = [...found.programs()];
  const user = found.groups.u ?? "";
  if (user.endsWith(":")) return programs.includes("curl");
  return found.groups.o?.trim() === "-U" && programs.some((program) => SMB.test(program));
}

/** The words {@linkcode commandWords} looks for: every program a check above names. */
const PROGRAM =
  /(?<![\w.-])(curl|https?|xhs?|mysql\w*|mariadb[\w-]*|mongo\w*|sshpass|redis-cli|docker|podman|nerdctl|buildah|login|smb\w+|rpcclient|psql|pg_\w+|createdb|dropdb|createuser|dropuser|vacuumdb)(?:\.exe)?(?![\w.:/-])/gi;
/** Where one command ends: a line end (not after `\`), `;`, `|`, `||`, `&&`. */
const COMMAND_END = /(?<!\\)\n|;|\|\|?|&&/g;

/**
 * The program words of the command at each position of `text`, asked in increasing order of
 * position (then each character is read once; a position before the last asked starts over).
 * The words are any of {@linkcode PROGRAM} in the command before the position, wherever it
 * stands (`sudo /usr/bin/curl`, `env X=1 curl`, `ssh host curl`, `bash -c "curl`), so `docker
 * run -u 1000:1000 curlimages/curl curl -u a:b` finds curl's option and not docker's.
 */
export function commandWords(text: string): (at: number) => ReadonlySet<string> {
  let scanned = 0;
  let words = new Set<string>();
  return (at) => {
    if (at < scanned) scanned = 0, words = new Set();
    const part = text.slice(scanned, at);
    let from = 0;
    for (const end of part.matchAll(COMMAND_END)) from = end.index + end[0].length;
    if (from > 0) words = new Set();
    for (const word of part.slice(from).matchAll(PROGRAM)) words.add(word[1].toLowerCase());
    scanned = at;
    return words;
  };
}
