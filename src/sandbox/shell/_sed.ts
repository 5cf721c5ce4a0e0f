/** Reads a sed script far enough to find the commands that write files or run programs. */
import { findOption, namesOption, parseArgs } from "./_options.ts";
import { type CommandRisk, risk } from "./_risk.ts";

/** The risk of `sed <args>`, or undefined when it only prints. */
export function sedRisk(args: readonly string[]): CommandRisk | undefined {
  const parsed = parseArgs(args, {
    short: "efl",
    long: ["--expression", "--file", "--line-length"],
  });
  const inPlace = findOption(parsed, "-i", "--in-place");
  if (inPlace) return risk("writes-files", `"sed ${inPlace.name}" edits files in place`);
  // What makes sed safe counts only when written out whole (a prefix may name another option).
  if (parsed.options.some((option) => option.name === "--sandbox")) return undefined;
  if (findOption(parsed, "-f", "--file")) {
    return risk("unknown", `"sed -f" runs a script from a file`);
  }
  const scripts = parsed.options
    .filter((option) => option.name === "-e" || namesOption(option.name, "--expression"))
    .map((option) => option.value ?? "");
  if (scripts.length === 0 && parsed.operands.length > 0) scripts.push(parsed.operands[0]);
  for (const script of scripts) {
    const found = sedScriptRisk(script);
    if (found) return found;
  }
  return undefined;
}

const SIMPLE = new Set("=dDgGhHnNpPxzFlLqQ{}!".split(""));

/**
 * The first `w`/`W`/`s///w` (writes) or `e`/`s///e` (runs) command of a script. GNU sed 4.9
 * reads a delimiter inside a regex's bracket expression as part of it (`s/[/]/x/w out` writes
 * `out`), older seds end the regex there: the script is read both ways, and either finding
 * counts.
 */
export function sedScriptRisk(script: string): CommandRisk | undefined {
  return scriptRisk(script, true) ?? scriptRisk(script, false);
}

function scriptRisk(script: string, brackets: boolean): CommandRisk | undefined {
  let i = 0;
  const skipTo = (stop: RegExp) => {
    while (i < script.length && !stop.test(script[i])) i++;
  };
  // `[`, an optional `^`, a leading `]`, then up to the closing `]`, over `[:alpha:]` and the like.
  const skipBracket = () => {
    i++;
    if (script[i] === "^") i++;
    if (script[i] === "]") i++;
    while (i < script.length && script[i] !== "]") {
      const open = script[i] === "[" && /[:.=]/.test(script[i + 1] ?? "");
      if (open) {
        const end = script.indexOf(`${script[i + 1]}]`, i + 2);
        i = end < 0 ? script.length : end + 1;
      }
      i++;
    }
  };
  const skipDelimited = (delimiter: string, regex = false) => {
    for (i++; i < script.length && script[i] !== delimiter; i++) {
      if (script[i] === "\\") i++;
      else if (regex && brackets && script[i] === "[") skipBracket();
    }
    i++;
  };
  while (i < script.length) {
    skipAddress();
    const command = script[i];
    if (command === undefined) break;
    if (/[\s;]/.test(command) || SIMPLE.has(command) || /\d/.test(command)) {
      i++;
    } else if (command === "w" || command === "W") {
      return risk("writes-files", `sed command "${command}" writes a file`);
    } else if (command === "e") {
      return risk("runs-code", `sed command "e" runs a shell command`);
    } else if ("#:btTrRaic".includes(command)) {
      skipTo(command === "#" || "rRaic".includes(command) ? /\n/ : /[;\n]/);
    } else if (command === "s" || command === "y") {
      const delimiter = script[i + 1];
      i++;
      skipDelimited(delimiter, command === "s");
      i--;
      skipDelimited(delimiter);
      if (command === "s") {
        const flags = /^[0-9gpiImMew]*/.exec(script.slice(i))?.[0] ?? "";
        if (flags.includes("w")) return risk("writes-files", `sed flag "s///w" writes a file`);
        if (flags.includes("e")) return risk("runs-code", `sed flag "s///e" runs a shell command`);
        i += flags.length;
      }
    } else {
      return risk("unknown", `sed command "${command}" is not understood`);
    }
  }
  return undefined;

  function skipAddress() {
    for (;;) {
      const ch = script[i];
      if (ch === "/") {
        skipDelimited("/", true);
        while (/[IM]/.test(script[i] ?? "")) i++;
      } else if (ch === "\\" && script[i + 1]) {
        i++;
        skipDelimited(script[i], true);
      } else if (ch !== undefined && /[\d$,~+ \t]/.test(ch)) {
        i++;
      } else {
        return;
      }
    }
  }
}
