/**
 * Secret masking: known secret values (API keys from config and the environment) and common key
 * formats are replaced by `[REDACTED]` markers in tool output before it reaches the model, the
 * screen, the session or the audit log. One combined regular expression does the work, so text
 * without secrets costs a single scan, and one more for the hint of the rarer formats
 * ({@linkcode MORE_HINT}).
 */
import { COPY, copyJson } from "../core/json_depth.ts";
import {
  acceptAssigned,
  acceptPasswordOption,
  acceptUserOption,
  commandWords,
  type Found,
  looksRandom,
} from "./secret_context.ts";

/** A key format: a regex source and the label its marker carries (`[REDACTED:<label>]`). */
interface KeyFormat {
  label: string;
  /**
   * Regex source. A named group `(?<v>…)` marks the secret part of the match (its last
   * occurrence there); the context around it (`Bearer `, `password=`, a URL's `@`) is kept.
   * Without it the whole match is secret. Other named groups are for `accept`.
   */
  source: string;
  /** Masks only when this holds; filters out identifiers such as `token = getToken()`. */
  accept?: (found: Found) => boolean;
}

/**
 * The last word of a secret's name (`DB_PASSWORD`, `clientSecret`, `X-Amz-Signature`); which
 * of them need more than that is in acceptAssigned().
 */
const SECRET_WORDS = "(?i:api[_-]?key|(?:secret|access|private)[_-]?key|secret|token|" +
  "passw(?:or)?d|passphrase|pass|pwd|credentials?|auth|sig(?:nature)?)";
/** A character of a bare or quoted value (a backslash only with what it escapes). */
const VALUE_CHAR = "[^\\s\"'`,;(){}<>\\[\\]&\\\\]";
/** The blanks after a command-line option (`--api-key x`, `-password x`), not before an option. */
const OPTION_BLANKS = "(?<=(?:^|[\\s\"'=])-[\\w-]{0,80})[ \\t]+(?![-\\s])";

/** Not preceded by a token character, so `risk-…` is not an `sk-…` key. */
const START = "(?<![A-Za-z0-9_-])";
const SEPARATOR = `["']?[ \\t]*(?::=|[:=])[ \\t]*`;

const FORMATS: readonly KeyFormat[] = [
  {
    label: "private-key",
    // An unterminated block (output cut short) is masked to the end of the text.
    source: "-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\\s\\S]*?" +
      "(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)",
  },
  { label: "anthropic-key", source: `${START}sk-ant-[A-Za-z0-9_-]{20,}` },
  {
    label: "openai-key",
    source: `${START}sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`,
    accept: ({ secret }) => looksRandom(secret),
  },
  {
    label: "github-token",
    source: `${START}(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`,
  },
  { label: "aws-access-key", source: "(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])" },
  {
    label: "aws-secret-key",
    source: `(?i:aws_secret_access_key)${SEPARATOR}["']?(?<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])`,
  },
  { label: "slack-token", source: `${START}xox[baprs]-[A-Za-z0-9-]{10,}` },
  { label: "google-api-key", source: `${START}AIza[0-9A-Za-z_-]{35}` },
  {
    label: "jwt",
    source: `${START}eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{0,}`,
  },
  {
    label: "basic-auth",
    source: `(?i:authorization)${SEPARATOR}["']?(?i:basic)[ \\t]+(?<v>[A-Za-z0-9+/]{8,}=*)`,
  },
  {
    label: "bearer-token",
    source: "(?<![A-Za-z0-9])(?i:bearer)[ \\t]+(?<v>[A-Za-z0-9._~+/-]{8,}=*)",
    accept: ({ secret }) => looksRandom(secret),
  },
  {
    // `password = "…"`, `GITHUB_TOKEN=…`, `DB_PASSWORD=hunter2`, `?token=ab`, `--api-key x`:
    // a value under a name that ends in a secret's word. Which values are secrets, so that
    // `const token = getToken()` and `password: string` stay: see acceptAssigned().
    label: "secret",
    source: `(?<k>${SECRET_WORDS})(?<s>${SEPARATOR}|${OPTION_BLANKS})` +
      // An escape is part of the value (`"pa\\"ss"` in JSON), so the value is found whole.
      `["']?(?<v>${VALUE_CHAR}{1,}(?:\\\\[^\\s]${VALUE_CHAR}*)*)`,
    accept: acceptAssigned,
  },
];

/**
 * After an option and its value, the name of a program whose option it may be, at most 256
 * characters back on its line (a line ended by `\` goes on): ordinary output is full of `-u`
 * and `-p` (`docker run -u 1000:1000 -p 80:80`, `mkdir -p`, `-pthread`), and a match costs a
 * check (some 5 µs), where this look back stops at the line's start. Which program it is, is
 * for the check.
 */
const AFTER_PROGRAM = "(?<=(?:curl|mysql|mariadb|mongo|sshpass|redis-cli|login|smb|rpcclient|" +
  "xhs?|https?)(?:[^\\n\\\\]|\\\\[\\s\\S]){0,256})";

/**
 * Command-line options that carry a password for some programs only. Runs are open-ended (`+`,
 * not `{1,}`): V8's counted loops made these five times slower, and a run ends at a blank.
 */
const COMMAND_FORMATS: readonly KeyFormat[] = [
  {
    // A user option's password: `curl -u alice:<password>`, `smbclient -U bob%<password>`.
    label: "command-password",
    source: `(?<![^\\s"'])(?<o>-[uU][ \\t]*|--(?:proxy-)?user(?:=|[ \\t]+))["']?` +
      `(?<u>[^\\s:"']*:|[^\\s%"']*%)(?<v>[^\\s"'\`]+)${AFTER_PROGRAM}`,
    accept: acceptUserOption,
  },
  {
    // A password option: `mysql -p<password>`, `sshpass -p <password>`, `redis-cli -a …`.
    label: "command-password",
    source: `(?<![^\\s"'])(?<o>-[pa])(?<s>[ \\t]*)["']?(?!-)(?<v>[^\\s"'\`]+)${AFTER_PROGRAM}`,
    accept: acceptPasswordOption,
  },
];

/**
 * Formats looked for only in text that holds {@linkcode MORE_HINT}: added to the regular
 * expression of every text, they made V8 scan all text about five times slower (132 KB: 0.16 ms
 * against 0.77 ms). Where the hint is found, one expression of all the formats runs, so what is
 * masked is what that one expression alone would mask.
 */
const MORE_FORMATS: readonly KeyFormat[] = [
  {
    label: "gitlab-token",
    source: `${START}gl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent)-[A-Za-z0-9_-]{20,}`,
  },
  { label: "huggingface-token", source: `${START}hf_[A-Za-z0-9]{30,}` },
  { label: "npm-token", source: `${START}npm_[A-Za-z0-9]{36,}` },
  { label: "stripe-key", source: `${START}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}` },
  { label: "sendgrid-key", source: `${START}SG\\.[A-Za-z0-9_-]{16,}\\.[A-Za-z0-9_-]{16,}` },
  { label: "groq-key", source: `${START}gsk_[A-Za-z0-9]{40,}` },
  {
    label: "token-auth",
    source: `(?i:authorization)${SEPARATOR}["']?(?i:token)[ \\t]+(?<v>[A-Za-z0-9._~+/-]{8,}=*)`,
    accept: ({ secret }) => looksRandom(secret),
  },
  {
    // The password of a URL's user part (`postgres://app:<password>@db`, `https://me:<token>@host`).
    // The match holds the `//` and user before it and the `@` after it (both kept), so a stream
    // cut never parts the password from what makes it one.
    label: "url-password",
    source: `//[^\\s/:@'"]{1,}:(?<v>[^\\s/@'"]{1,})@`,
  },
];

/**
 * Found in every text one of {@linkcode MORE_FORMATS} matches (each format's own literal start,
 * a URL's user and password, `authorization`; case aside): without it, none of them can match.
 * Looking costs about 0.1 ms on 132 KB.
 */
const MORE_HINT =
  /gl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent)-|hf_|npm_|[sr]k_(?:live|test)_|SG\.|gsk_|\/\/[^\s/:@'"]+:[^\s/@'"]+@|authorization/i;

/**
 * The longest run a format's open-ended part takes (`{20,}` is `{20,65536}`): far longer than
 * any key, and short enough for V8's regular expressions, whose backtracking stack overflowed
 * on one match of 5.5 million characters (`password=` and a 6 MB value): the masker threw, and
 * the tool call with it. A longer run is masked to this length.
 */
const MAX_MATCH = 65536;

/** Every format, {@linkcode MORE_FORMATS} last. */
const ALL_FORMATS: readonly KeyFormat[] = [...FORMATS, ...COMMAND_FORMATS, ...MORE_FORMATS];

/**
 * One regular expression for `formats` (each in a group `f<i>`, its named groups `<name><i>`,
 * `i` its place in {@linkcode ALL_FORMATS}), after `first` (the known values' group).
 */
function formatsRegex(formats: readonly KeyFormat[], first: string[]): RegExp {
  const parts = [...first];
  formats.forEach((format) => {
    const i = ALL_FORMATS.indexOf(format);
    const source = format.source.replace(/\(\?<([A-Za-z]+)>/g, `(?<$1${i}>`)
      .replace(/\{(\d+),\}/g, `{$1,${MAX_MATCH}}`);
    parts.push(`(?<f${i}>${source})`);
  });
  return new RegExp(parts.join("|"), "g");
}

/** A run of URL characters holding at least one percent-encoded byte. */
const PERCENT_RUN = /[\w.~+/=-]*(?:%[0-9A-Fa-f]{2}[\w.~+/=-]*)+/g;

/** Known values shorter than this are ignored: they would mask ordinary words. */
export const MIN_SECRET_LENGTH = 8;

/**
 * What may stand between two characters of a known value that is still found: white space (a
 * wrapped line: `fold`, base64's 76 columns; spaced-out letters) and the invisible characters
 * (soft hyphen, zero-width space, joiners, word joiner, byte order mark), at most
 * {@linkcode MAX_BREAK} in a row.
 */
const BREAK = "[\\s\\u00ad\\u200b-\\u200d\\u2060\\ufeff]";
const BREAK_CHAR = /[\s\u00ad\u200b-\u200d\u2060\ufeff]/;
const MAX_BREAK = 8;

/**
 * A run of at least this many characters of a known value (a prefix, a middle, an end) is
 * masked: 16 random characters are never in other text by chance, and common prefixes
 * (`sk-ant-api03-`, 13) are shorter.
 */
export const MIN_KNOWN_RUN = 16;

/**
 * Whether a run of `value`'s characters says it was there: a value with no blank that is not a
 * path or an address (a key, a token, a password). A known value may also be a path or a URL (an
 * MCP server's `PRIVATE_DATA_DIR`, a DSN): 16 characters of `/home/me/projects/…` or
 * `postgres://localhost` are in ordinary output, which would be masked wherever it names them.
 * Such a value is masked whole, in each of its forms.
 */
function runsCount(value: string): boolean {
  return !/\s/.test(value) && !value.includes("://") && !/^[/~.]/.test(value);
}
/** A run is found from its value's pieces of this length, one every so many characters. */
const RUN_PIECE = 8;

/**
 * The forms in which a known value is found, beside itself (case aside, see
 * {@linkcode SecretMasker}): base64 and base64url at each of the three byte alignments (only
 * whole groups, so the form is the same whatever stands before and after the value), hex, the
 * value reversed, and as a JSON string writes it (`\"`, `\\`). These are what one short
 * command or an ordinary program turns a file or a variable into (`base64`, `xxd -p`, `od`,
 * `rev`, `tr a-z A-Z`, `fold`, a JSON dump) and a person or a program can read back. Not
 * covered, on purpose: encodings that need a key or a choice to read back (ciphers, xor,
 * compression), other escapes (`\uXXXX` of plain ASCII letters is written on purpose, and a
 * model that writes on purpose can use any of the former), and a value cut into pieces of fewer
 * than {@linkcode MIN_KNOWN_RUN} characters: no finite list of patterns catches those, and each
 * form more slows every scan (all of these together made masking about three times slower, still
 * linear: some 25 ns a character). Percent-encoding is decoded ({@linkcode SecretMasker.mask}).
 */
export function knownForms(value: string): string[] {
  const bytes = new TextEncoder().encode(value);
  // As a JSON string holds it: a value with a quote, a backslash or a control character.
  const forms = [value, [...value].reverse().join(""), JSON.stringify(value).slice(1, -1)];
  forms.push(Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join(""));
  for (let shift = 0; shift < 3; shift++) {
    const whole = Math.floor((bytes.length - shift) / 3) * 3;
    const base64 = bytes.subarray(shift, shift + Math.max(0, whole)).toBase64();
    forms.push(base64, base64.replaceAll("+", "-").replaceAll("/", "_"));
  }
  return [...new Set(forms)].filter((form) => form.length >= MIN_SECRET_LENGTH);
}

/**
 * A pattern for `form`, case aside, that allows a few {@linkcode BREAK} characters between two
 * characters. Case is written out (`[aA]`): V8 (Deno 2.9) let `(?i:…)` around long alternatives
 * match only the first of them case-blind.
 */
function brokenSource(form: string): string {
  return [...form].map(caseless).join(`${BREAK}{0,${MAX_BREAK}}`);
}

/** A pattern for `text` in any case. */
function caselessSource(text: string): string {
  return [...text].map(caseless).join("");
}

function caseless(char: string): string {
  const lower = char.toLowerCase();
  const upper = char.toUpperCase();
  return lower !== upper && lower.length === 1 && upper.length === 1
    ? `[${lower}${upper}]`
    : escapeRegex(char);
}

/**
 * The shortest piece of a known value {@linkcode SecretMasker.carriesKnownValue} looks for: a
 * random key shares no piece this long with other text by chance.
 */
export const MIN_KNOWN_PIECE = 8;

/** `text` in compatibility form, lower-cased, with only its ASCII letters and digits. */
function squeezed(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/[^a-z0-9]/g, "");
}

/** Where a candidate secret sits in a text (`end` exclusive). */
export interface SecretSpan {
  start: number;
  end: number;
}

/**
 * A masker of the keys a config holds (the model's, and the others tern sends: `apiKeys`) and of
 * the key formats.
 */
export function keyMasker(config: KeyConfig) {
  return new SecretMasker([
    ...(config.apiKey === undefined ? [] : [config.apiKey]),
    ...Object.values(config.apiKeys ?? {}),
  ]);
}

/** What {@linkcode keyMasker} reads from a config. */
export interface KeyConfig {
  apiKey?: string;
  apiKeys?: Record<string, string>;
}

/**
 * {@linkcode keyMasker} of `config()`, made at its first use (a run with nothing to mask is not
 * kept waiting for it) and made again when `config()` returns another object (a /model or a
 * /login changed the keys).
 */
export function lazyKeyMasker(config: () => KeyConfig): (text: string) => string {
  let made: { config: KeyConfig; masker: SecretMasker } | undefined;
  return (text) => {
    const current = config();
    if (made?.config !== current) made = { config: current, masker: keyMasker(current) };
    return made.masker.mask(text);
  };
}

/** A blank or a control character, and a run of them (see the SecretMasker constructor). */
const BLANK_OR_CONTROL = /[\s\p{Cc}]/u;
const BLANKS_OR_CONTROLS = /[\s\p{Cc}]+/u;

/**
 * Masks secrets in text: the known values it was built with (`[REDACTED]`) and the formats of
 * common keys and credentials (`[REDACTED:openai-key]`, `[REDACTED:private-key]`, …). For
 * `Bearer …`, `password=…` and the like only the value is replaced. A known value is found in
 * any case, in each of its {@linkcode knownForms}, broken by white space or invisible
 * characters, percent-encoded, and in part (a run of {@linkcode MIN_KNOWN_RUN} characters).
 */
export class SecretMasker {
  /** {@linkcode FORMATS} and {@linkcode COMMAND_FORMATS} (and the known values). */
  readonly #regex: RegExp;
  /** {@linkcode ALL_FORMATS} (and the known values), for text with {@linkcode MORE_HINT}. */
  readonly #full: RegExp;
  readonly #known: RegExp | undefined;
  /** The known values, longest first. */
  readonly #values: string[];
  /** Every {@linkcode knownForms} of the known values, lower-cased, longest first. */
  readonly #forms: string[];
  /** The pieces of the known values that find a run of one ({@linkcode MIN_KNOWN_RUN}). */
  readonly #pieces: RegExp | undefined;
  /** Each piece (lower-cased) with the values it is taken from and where. */
  readonly #pieceAt = new Map<string, [value: string, at: number][]>();
  /** The length of the longest known value (0 without any). */
  readonly longestValue: number;

  /** `values`: secret values to mask wherever they occur; shorter than 8 characters are ignored. */
  constructor(values: Iterable<string> = []) {
    // A value holding a blank or a control character (a key read with a line end inside it)
    // is shown with that character changed (a space, `\n`, `␊`): each piece of it between
    // such characters is a value too.
    const split = [...values].flatMap((value) =>
      BLANK_OR_CONTROL.test(value) ? [value, ...value.split(BLANKS_OR_CONTROLS)] : [value]
    );
    const known = [...new Set(split)].filter((value) => value.length >= MIN_SECRET_LENGTH)
      .sort((a, b) => b.length - a.length);
    this.#values = known;
    this.longestValue = known[0]?.length ?? 0;
    this.#forms = [...new Set(known.flatMap(knownForms).map((form) => form.toLowerCase()))]
      .sort((a, b) => b.length - a.length);
    const knownSource = `(?:${this.#forms.map(brokenSource).join("|")})`;
    this.#known = known.length > 0 ? new RegExp(knownSource, "g") : undefined;
    const first = known.length > 0 ? [`(?<known>${knownSource})`] : [];
    for (const value of known) {
      if (value.length <= MIN_KNOWN_RUN || !runsCount(value)) continue;
      for (let at = 0;; at = Math.min(at + RUN_PIECE, value.length - RUN_PIECE)) {
        const piece = value.slice(at, at + RUN_PIECE).toLowerCase();
        this.#pieceAt.set(piece, [...this.#pieceAt.get(piece) ?? [], [value, at]]);
        if (at === value.length - RUN_PIECE) break;
      }
    }
    const pieces = [...this.#pieceAt.keys()].map(caselessSource).join("|");
    this.#pieces = pieces === "" ? undefined : new RegExp(pieces, "g");
    this.#regex = formatsRegex([...FORMATS, ...COMMAND_FORMATS], first);
    this.#full = formatsRegex(ALL_FORMATS, first);
  }

  /** The expression for `text`: every format's where {@linkcode MORE_HINT} is found. */
  #regexFor(text: string): RegExp {
    return MORE_HINT.test(text) ? this.#full : this.#regex;
  }

  /**
   * `text` with every secret replaced by a marker. Never throws: should the expression fail
   * (its engine's limits), the whole text is withheld rather than passed on unchecked.
   */
  mask(text: string): string {
    if (text.length < MIN_SECRET_LENGTH) return text;
    try {
      // The program words are read only for a match that needs them, and once for the text.
      let programs: ((at: number) => ReadonlySet<string>) | undefined;
      const words = (at: number) => (programs ??= commandWords(text))(at);
      const masked = text.replace(
        this.#regexFor(text),
        (match, ...rest) => this.#marker(match, rest, words),
      );
      return this.#values.length > 0 ? replaceSpans(masked, this.#partSpans(masked)) : masked;
    } catch {
      return UNCHECKED;
    }
  }

  /**
   * Where `text` holds a known value that the regular expression does not find: a run of URL
   * characters that holds one once percent-decoded (`%73%6b%2d…`), and a run of
   * {@linkcode MIN_KNOWN_RUN} or more characters of one (a prefix, a middle, an end; case
   * aside). In text order, possibly overlapping.
   */
  #partSpans(text: string): SecretSpan[] {
    const spans: SecretSpan[] = [];
    if (text.includes("%")) {
      for (const run of text.matchAll(PERCENT_RUN)) {
        let decoded: string;
        try {
          decoded = decodeURIComponent(run[0]).toLowerCase();
        } catch {
          continue;
        }
        if (this.#values.some((value) => decoded.includes(value.toLowerCase()))) {
          spans.push({ start: run.index, end: run.index + run[0].length });
        }
      }
    }
    if (this.#pieces === undefined) return spans;
    const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
    for (const found of text.matchAll(this.#pieces)) {
      for (const [value, at] of this.#pieceAt.get(found[0].toLowerCase()) ?? []) {
        let start = found.index;
        let from = at;
        while (start > 0 && from > 0 && same(text[start - 1], value[from - 1])) start--, from--;
        let end = found.index + RUN_PIECE;
        let to = at + RUN_PIECE;
        while (end < text.length && to < value.length && same(text[end], value[to])) end++, to++;
        if (end - start >= MIN_KNOWN_RUN) spans.push({ start, end });
      }
    }
    return spans.sort((a, b) => a.start - b.start);
  }

  /** The marker for one match, or what stays of it when its format's check says no. */
  #marker(match: string, rest: unknown[], programs: (at: number) => ReadonlySet<string>): string {
    const groups = rest.at(-1) as Record<string, string | undefined>;
    if (groups.known !== undefined) return "[REDACTED]";
    const i = ALL_FORMATS.findIndex((_, i) => groups[`f${i}`] !== undefined);
    const format = ALL_FORMATS[i];
    const secret = groups[`v${i}`] ?? match;
    // What the match holds around the secret is kept: before it (`Bearer `, `password=`) and,
    // for a URL's password, the `@` after it. The secret is its last occurrence in the match.
    const keep = match.lastIndexOf(secret);
    const after = match.slice(keep + secret.length);
    const quoted = keep > 0 && (match[keep - 1] === '"' || match[keep - 1] === "'");
    if (format.accept) {
      const text = rest.at(-2) as string;
      const start = rest.at(-3) as number;
      const found: Found = {
        text,
        start,
        match,
        secret,
        end: start + keep + secret.length,
        quoted,
        groups: ownGroups(groups, i),
        programs: () => programs(start),
      };
      // Not a secret after all, but a known value (8 characters or more) may still hide in it.
      // No recursion: a crafted `password=password=…` must not nest once per repetition.
      if (!format.accept(found)) {
        const checked = secret.length < MIN_SECRET_LENGTH ? secret : this.maskKnown(secret);
        return match.slice(0, keep) + checked + after;
      }
    }
    if (format.accept !== acceptAssigned) {
      return `${match.slice(0, keep)}[REDACTED:${format.label}]${after}`;
    }
    // A value under a secret's name (`--token …`) keeps the marker of what it is whole: a known
    // value's, a key format's.
    if (secret.length >= MIN_SECRET_LENGTH && this.maskKnown(secret) === "[REDACTED]") {
      return `${match.slice(0, keep)}[REDACTED]${after}`;
    }
    return `${match.slice(0, keep)}[REDACTED:${keyLabel(secret) ?? format.label}]${after}`;
  }

  /** `text` with the known values replaced by `[REDACTED]`, and no format looked for. */
  maskKnown(text: string): string {
    return this.#known ? text.replace(this.#known, "[REDACTED]") : text;
  }

  /**
   * Whether `text` carries at least half of a known value, in pieces of
   * {@linkcode MIN_KNOWN_PIECE} or more characters, compared without case and without anything
   * but letters and digits: a key split by separators or across parameters, or lower-cased (in
   * a host name), is still found. For text about to leave tern (a URL, a search query), beside
   * {@linkcode SecretMasker.mask}. Never throws.
   */
  carriesKnownValue(text: string): boolean {
    if (this.#forms.length === 0) return false;
    const flat = squeezed(text);
    const pieces = new Set<string>();
    for (let i = 0; i + MIN_KNOWN_PIECE <= flat.length; i++) {
      pieces.add(flat.slice(i, i + MIN_KNOWN_PIECE));
    }
    for (const form of this.#forms) {
      const key = squeezed(form);
      if (key.length < MIN_KNOWN_PIECE) continue;
      const found = new Uint8Array(key.length);
      for (let i = 0; i + MIN_KNOWN_PIECE <= key.length; i++) {
        if (pieces.has(key.slice(i, i + MIN_KNOWN_PIECE))) found.fill(1, i, i + MIN_KNOWN_PIECE);
      }
      if (found.reduce((sum, bit) => sum + bit, 0) * 2 >= key.length) return true;
    }
    return false;
  }

  /**
   * The length of the longest end of `text` that begins a known value without holding all of
   * it, case aside: what a stream must hold back until it knows whether the value follows (0
   * for none).
   */
  knownValueStarting(text: string): number {
    let longest = 0;
    const lower = text.toLowerCase();
    for (const value of this.#values) {
      const wanted = value.toLowerCase();
      // The earliest start wins (the longest end); one that cannot beat `longest` is not tried.
      const first = Math.max(0, text.length - value.length + 1);
      for (let start = first; start < text.length - longest; start++) {
        if (lower.charCodeAt(start) !== wanted.charCodeAt(0)) continue;
        if (wanted.startsWith(lower.slice(start))) {
          longest = text.length - start;
          break;
        }
      }
    }
    return longest;
  }

  /**
   * A copy of a JSON-like value with every string masked; a string under a key that names a
   * secret (`apiKey`, `password`, `token`, …) is replaced whole. Other values are kept. Walks
   * without recursion, so no depth of nesting overflows the stack.
   */
  maskDeep(value: unknown): unknown {
    return copyJson(value, (item, { key }) => {
      if (typeof item !== "string") return COPY;
      const whole = typeof key === "string" && item !== "" && SECRET_KEY.test(key);
      return whole ? "[REDACTED]" : this.mask(item);
    });
  }

  /**
   * Where the masker's patterns match in `text`, before any format check; in text order. Should
   * the expression fail, all of `text` is one span (held as a secret would be).
   */
  spans(text: string): SecretSpan[] {
    try {
      const spans = [...text.matchAll(this.#regexFor(text))].map((m) => ({
        start: m.index,
        end: m.index + m[0].length,
      }));
      if (this.#values.length === 0) return spans;
      return [...spans, ...this.#partSpans(text)].sort((a, b) => a.start - b.start);
    } catch {
      return [{ start: 0, end: text.length }];
    }
  }

  /**
   * The length of the longest end of `text` that begins one of the {@linkcode knownForms} of a
   * known value without holding all of it, case and breaks aside, and holding at least
   * `minChars` of it (0 for none): what a stream of output must hold back, even past a line's
   * end, until it knows whether the rest follows.
   */
  knownFormStarting(text: string, minChars = 1): number {
    const longest = this.#forms[0]?.length ?? 0;
    const chars: string[] = [];
    const where: number[] = [];
    let gap = 0;
    for (let i = text.length - 1; i >= 0 && chars.length < longest; i--) {
      if (BREAK_CHAR.test(text[i])) {
        if (++gap > MAX_BREAK) break;
        continue;
      }
      gap = 0;
      chars.push(text[i].toLowerCase());
      where.push(i);
    }
    const end = chars.reverse().join("");
    where.reverse();
    for (let start = 0; start <= end.length - minChars; start++) {
      const rest = end.slice(start);
      if (this.#forms.some((form) => form.length > rest.length && form.startsWith(rest))) {
        return text.length - where[start];
      }
    }
    return 0;
  }
}

/** The formats that take a whole key (`ghp_…`, `sk-…`), their labels, and one expression for them. */
let keyFormats: { formats: KeyFormat[]; regex: RegExp } | undefined;

/**
 * The label of the key format `secret` is, whole (`--token ghp_…` is a GitHub token more than a
 * secret), if any. Made at first use; runs on accepted secrets only.
 */
function keyLabel(secret: string): string | undefined {
  if (keyFormats === undefined) {
    const formats = ALL_FORMATS.filter((format) =>
      !/\(\?<[A-Za-z]/.test(format.source) && !format.accept
    );
    const source = formats.map((format, i) => `(?<k${i}>${format.source})`).join("|");
    keyFormats = { formats, regex: new RegExp(`^(?:${source})$`) };
  }
  const groups = keyFormats.regex.exec(secret)?.groups;
  return groups && keyFormats.formats.find((_, i) => groups[`k${i}`] !== undefined)?.label;
}

/** The named groups of format `i` (`v3` as `v`), from all of a match's groups. */
function ownGroups(
  groups: Record<string, string | undefined>,
  i: number,
): Record<string, string | undefined> {
  const own: Record<string, string | undefined> = {};
  for (const name of ["k", "s", "o", "u", "v"]) own[name] = groups[`${name}${i}`];
  return own;
}

/** `text` with each of `spans` (ordered by start, maybe overlapping) replaced by one marker. */
function replaceSpans(text: string, spans: readonly SecretSpan[]): string {
  if (spans.length === 0) return text;
  let out = "";
  let at = 0;
  for (const span of spans) {
    if (span.end <= at) continue;
    out += `${text.slice(at, Math.max(at, span.start))}[REDACTED]`;
    at = span.end;
  }
  return out + text.slice(at);
}

/** What stands for a text the masker could not check. */
const UNCHECKED = "[REDACTED: text the secret check could not read]";

const SECRET_KEY =
  /(?:api[_-]?key|secret|token|passw(?:or)?d|credentials?|private[_-]?key|access[_-]?key|authorization)$/i;

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Masks output that arrives in pieces; see {@linkcode createStreamMasker}. */
export interface StreamMasker {
  /** Masks a piece of output; returns what is safe to pass on now (may be empty). */
  push(chunk: string): string;
  /** Masks and returns everything held back; call once at the end. */
  flush(): string;
}

/** The partial last line held back; a longer line is cut at a separator or after this many. */
const MAX_HELD_LINE = 8192;
/** Kept back at least, when a long line is cut, so a key split there is still whole next time. */
const MIN_TAIL = 1024;
/**
 * A secret's match that goes on past the cut is held back whole, up to this many characters:
 * past them (a `password=` followed by megabytes) the held text is let go at the line cut,
 * masked, and not rescanned with every piece, which was quadratic and then overflowed.
 */
const MAX_HELD_MATCH = MAX_MATCH + MAX_HELD_LINE;
/** An unterminated private key longer than this is replaced by one marker and dropped to its end. */
const MAX_PRIVATE_KEY = 65536;
const PEM_END = /-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/;

/** The fewest characters of a key's form a held end past a line's end must hold. */
const FORM_HOLD_CHARS = 4;

/**
 * Masks a stream of text so that a secret split across chunks is still masked: it holds back
 * the partial last line (and an unfinished private key block) until more arrives or
 * {@linkcode StreamMasker.flush} is called.
 */

export function createStreamMasker(masker: SecretMasker): StreamMasker {
  const tail = Math.max(MIN_TAIL, masker.longestValue);
  let held = "";
  let inPrivateKey = false;
  const push = (chunk: string): string => {
    held += chunk;
    if (inPrivateKey) {
      const end = PEM_END.exec(held);
      if (!end) {
        held = held.slice(-64);
        return "";
      }
      held = held.slice(end.index + end[0].length);
      inPrivateKey = false;
    }
    const pem = unfinishedPrivateKey(held);
    if (pem !== -1 && held.length - pem > MAX_PRIVATE_KEY) {
      const out = `${masker.mask(held.slice(0, pem))}[REDACTED:private-key]`;
      held = "";
      inPrivateKey = true;
      return out;
    }
    // Past a line's end only an end of FORM_HOLD_CHARS or more that begins a form waits: a
    // line ending in one character a form starts with (often, over a key's several forms)
    // would otherwise wait for the command's next output, and the screen would show the output
    // one line short. What a shorter end shows is fewer characters than any key.
    const formEnd = masker.knownFormStarting(held, FORM_HOLD_CHARS);
    let cut = Math.min(lineCut(held, tail), held.length - formEnd);
    if (pem !== -1) cut = Math.min(cut, pem);
    const spans = masker.spans(held);
    for (const span of spans) {
      if (span.start < cut && span.end > cut && held.length - span.start <= MAX_HELD_MATCH) {
        cut = span.start;
      }
    }
    // A secret that starts before the cut is whole in what is held (the cut keeps back the
    // partial line, and of a longer line more than the longest value), so where the patterns
    // found none there, the text passes as it is: one scan a piece, not two.
    const before = held.slice(0, cut);
    const out = spans.some((span) => span.start < cut) ? masker.mask(before) : before;
    held = held.slice(cut);
    return out;
  };
  const flush = (): string => {
    const out = inPrivateKey ? "" : masker.mask(held);
    held = "";
    inPrivateKey = false;
    return out;
  };
  return { push, flush };
}

/**
 * Masks the known values in text a model streams, without holding back more than it must: only
 * an end that begins a known value waits for the next piece, so the text keeps flowing word by
 * word. (The formats of {@linkcode SecretMasker.mask} can span a whole line, and the finished
 * message is masked with them.) What is still held at the end is passed on unless it is long
 * enough to be most of a key: then it is replaced by the marker.
 */
export function createKnownValueStreamMasker(masker: SecretMasker): StreamMasker {
  let held = "";
  return {
    push(chunk) {
      const masked = masker.maskKnown(held + chunk);
      const keep = masker.knownValueStarting(masked);
      held = masked.slice(masked.length - keep);
      return masked.slice(0, masked.length - keep);
    },
    flush() {
      const out = held.length >= MIN_SECRET_LENGTH ? "[REDACTED]" : held;
      held = "";
      return out;
    },
  };
}

/** Where the held text may be cut: after the last newline, or inside a very long line. */
function lineCut(text: string, tail: number): number {
  const lineStart = text.lastIndexOf("\n") + 1;
  if (text.length - lineStart <= MAX_HELD_LINE) return lineStart;
  const limit = text.length - tail;
  for (let i = limit; i > limit - MAX_HELD_LINE && i > lineStart; i--) {
    if (",;{}[]()<>|".includes(text[i - 1])) return i;
  }
  return limit;
}

/** The start of a private key block with no end yet (or of a cut-off BEGIN line), else -1. */
function unfinishedPrivateKey(text: string): number {
  const begin = text.lastIndexOf("-----BEGIN");
  if (begin === -1) return -1;
  const rest = text.slice(begin);
  if (rest.includes("-----END")) return -1;
  const newline = rest.indexOf("\n");
  return newline === -1 || rest.slice(0, newline).includes("PRIVATE KEY") ? begin : -1;
}
