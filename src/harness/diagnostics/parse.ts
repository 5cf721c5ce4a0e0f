/**
 * Reading a checker's output into diagnostics: the formats of `deno check`, `tsc`, `bash -n`,
 * and the `path:line:col: message` line most compilers and linters print (pyright, gofmt,
 * go vet, cargo's short format, eslint's unix format, tern's own Python syntax check).
 */
import { isAbsolute, resolve } from "../../core/path.ts";
import { fileURLToPath } from "node:url";

/** How a checker prints its findings. */
export type DiagnosticFormat = "deno" | "tsc" | "bash" | "line";

/** One finding of a checker, its path absolute. */
export interface Diagnostic {
  path: string;
  line: number;
  column?: number;
  severity: "error" | "warning" | "info";
  message: string;
}

// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

/** The diagnostics in `output`; paths relative to `cwd` are made absolute. Never throws. */
export function parseDiagnostics(
  output: string,
  format: DiagnosticFormat,
  cwd: string,
): Diagnostic[] {
  const lines = output.replace(ANSI, "").split(/\r?\n/);
  const at = (path: string) => {
    if (path.startsWith("file://")) {
      try {
        return fileURLToPath(path);
      } catch {
        return path;
      }
    }
    return isAbsolute(path) ? path : resolve(cwd, path);
  };
  // Each pattern reads "." as any character (the `s` flag): a character "." would not take (a
  // carriage return or line separator the file holds, which a checker quotes) would make it
  // fail at every candidate, each tried to the line's end. Leading white space and the path
  // are told apart (`\s*(\S`) for the same reason.
  switch (format) {
    case "deno":
      return parseDeno(lines, at);
    case "tsc":
      return lines.flatMap((line) => {
        const m = /^(.+?)\((\d+),(\d+)\): (error|warning|message) (TS\d+: .*)$/s.exec(line.trim());
        return m ? [diagnostic(at(m[1]), m[2], m[3], m[4], m[5])] : [];
      });
    case "bash":
      return lines.flatMap((line) => {
        const m = /^(.+?): line (\d+): (.*)$/s.exec(line);
        // bash follows a syntax error with the line it was in, quoted: not a finding.
        if (!m || /^`.*'$/s.test(m[3])) return [];
        return [diagnostic(at(m[1]), m[2], undefined, "error", m[3])];
      });
    case "line":
      return lines.flatMap((line) => {
        const m =
          /^\s*(\S.*?):(\d+):(?:(\d+):)?\s*(?:-\s*)?(?:(error|warning|note|info|information)(?:\[[^\]]*\])?:\s*)?(.+)$/is
            .exec(line);
        if (!m || /^\d+$/.test(m[1])) return [];
        return [diagnostic(at(m[1]), m[2], m[3], (m[4] ?? "error").toLowerCase(), m[5])];
      });
  }
}

/** `TS2322 [ERROR]: message` … `    at file:///a.ts:1:7`. */
function parseDeno(lines: string[], at: (path: string) => string): Diagnostic[] {
  const found: Diagnostic[] = [];
  let pending: { severity: string; message: string } | undefined;
  for (const line of lines) {
    const head = /^(?:error: )?(TS\d+) \[(ERROR|WARNING)\]: (.*)$/s.exec(line);
    if (head) {
      pending = { severity: head[2].toLowerCase(), message: `${head[1]}: ${head[3]}` };
      continue;
    }
    const where = /^\s+at (file:\/\/.+):(\d+):(\d+)\s*$/.exec(line);
    if (where && pending) {
      found.push(diagnostic(at(where[1]), where[2], where[3], pending.severity, pending.message));
      pending = undefined;
    }
  }
  return found;
}

function diagnostic(
  path: string,
  line: string,
  column: string | undefined,
  severity: string,
  message: string,
): Diagnostic {
  const level = severity === "warning" ? "warning" : severity === "error" ? "error" : "info";
  const found: Diagnostic = { path, line: Number(line), severity: level, message: message.trim() };
  if (column !== undefined) found.column = Number(column);
  return found;
}
