/** Configuration errors: one message each, with the file, key and position when known. */
import { TernError } from "../core/errors.ts";
import { KEY_PREFIX, tokenShaped } from "../core/token_shape.ts";

/** Where a configuration error was found; every field is optional. */
export interface ConfigErrorDetails {
  /** Absolute path of the file at fault (a config file or `.env`). */
  file?: string;
  /** The config key (`maxRounds`) or environment variable (`TERN_MAX_ROUNDS`) at fault. */
  key?: string;
  /** 1-based line in `file`. */
  line?: number;
  /** 1-based column in `file`, in UTF-16 code units. */
  column?: number;
  cause?: unknown;
}

/**
 * Invalid or unreadable configuration: bad usage for the CLI. Messages never contain an API key:
 * values are quoted only for keys that cannot hold one.
 */
export class ConfigError extends TernError {
  override name = "ConfigError";
  readonly file?: string;
  readonly key?: string;
  readonly line?: number;
  readonly column?: number;

  constructor(message: string, details: ConfigErrorDetails = {}) {
    super(message, "cause" in details ? { cause: details.cause } : {});
    this.file = details.file;
    this.key = details.key;
    this.line = details.line;
    this.column = details.column;
  }
}

/** Converts a character offset in `text` to a 1-based line and column. */
export function lineColumnAt(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

const MAX_SHOWN_CHARS = 60;

/**
 * True for a string that starts like an API key (`sk-…`, `key_…`): shown nowhere, even where a
 * long name of a model is (which {@linkcode formatValue}'s wider check would take for a token).
 */
export function looksLikeKey(text: string): boolean {
  return KEY_PREFIX.test(text.trim());
}

/**
 * True for strings shaped like credentials, or holding one among other words: a key pasted into
 * the wrong setting, or a URL that does not parse with its key in the query
 * (`https//host/v1?key=sk-…`), which no URL masking reaches.
 */
function looksSecret(text: string): boolean {
  const trimmed = text.trim();
  if (tokenShaped(trimmed)) return true;
  return trimmed.split(/[\s?&=:/@#,;'"`]+/).some((piece) =>
    (piece.length >= 16 && KEY_PREFIX.test(piece)) || (piece.length >= 32 && tokenShaped(piece))
  );
}

/**
 * Renders a rejected value for an error message: strings quoted and shortened, objects named,
 * and strings that look like an API key withheld.
 */
export function formatValue(value: unknown): string {
  if (typeof value === "string") {
    if (looksSecret(value)) return "a value that looks like a secret (not shown)";
    const shown = value.length > MAX_SHOWN_CHARS ? `${value.slice(0, MAX_SHOWN_CHARS)}…` : value;
    return JSON.stringify(shown);
  }
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  if (typeof value === "object") return "an object";
  return String(value);
}

/** Describes why a file could not be read, from the error `Deno.readTextFileSync` threw. */
export function describeReadError(error: unknown): string {
  if (error instanceof Deno.errors.IsADirectory) return "is a directory";
  if (error instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (error instanceof Deno.errors.NotCapable) return "read access not granted";
  return error instanceof Error ? error.message : String(error);
}

const SYNTAX_MESSAGES: Record<string, string> = {
  InvalidSymbol: "unexpected character",
  InvalidNumberFormat: "invalid number",
  PropertyNameExpected: "expected a property name in double quotes",
  ValueExpected: "expected a value",
  ColonExpected: "expected a colon",
  CommaExpected: "expected a comma",
  CloseBraceExpected: "expected a closing brace",
  CloseBracketExpected: "expected a closing bracket",
  EndOfFileExpected: "expected the end of the file",
  InvalidCommentToken: "invalid comment",
  UnexpectedEndOfComment: "unterminated comment",
  UnexpectedEndOfString: "unterminated string",
  UnexpectedEndOfNumber: "unterminated number",
  InvalidUnicode: "invalid unicode escape",
  InvalidEscapeCharacter: "invalid escape character",
  InvalidCharacter: "invalid character in string",
};

/** A jsonc-parser error code (`printParseErrorCode`) in words: `CommaExpected` → "expected a comma". */
export function jsoncSyntaxMessage(code: string): string {
  return SYNTAX_MESSAGES[code] ?? code;
}
