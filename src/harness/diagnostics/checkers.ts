/**
 * Which checker looks at a changed file: the person's own (`diagnostics.checkers` in their
 * config), else a built-in one found on this machine — `deno check` (a workspace with
 * deno.json), `tsc --noEmit` (tsconfig.json), a Python syntax check, `gofmt -e`, `bash -n`.
 * Each is a shell command run in the sandbox.
 *
 * A built-in checker never runs the repository's code: its program is looked up on PATH
 * outside the workspace (not `node_modules/.bin/tsc`, not `./venv/bin/python`) and named by
 * its absolute path, and it only reads (no `cargo check`, whose build scripts run). It runs from
 * `/`, every path it is given absolute: a version manager's shim on PATH (asdf, mise, pyenv,
 * nodenv) reads its working folder's version file, which may name a program of the
 * repository's (asdf's `path:` versions). A command from a config file comes only from the
 * person's own config (a project's is refused when the config loads); a project's own checks
 * belong in its hooks, which run after trust.
 */
import { existsSync } from "node:fs";
import { extname, join } from "../../core/path.ts";
import { shellJoin } from "../../core/shell_join.ts";
import type { CheckerSettings } from "../../config/types.ts";
import type { DiagnosticFormat } from "./parse.ts";
import { Programs } from "./programs.ts";

/** A checker ready to run for one file. */
export interface Checker {
  name: string;
  format: DiagnosticFormat;
  /** The shell command checking `file` (absolute). */
  command(file: string): string;
  /** The folder the command runs from, which relative paths in its output start at. */
  from: "/" | "workspace";
}

/** The Python syntax check: compile, never import or run; `-I` keeps the workspace off sys.path. */
const PYTHON_SYNTAX = [
  "import sys",
  "p=sys.argv[1]",
  "try: compile(open(p,encoding='utf-8').read(),p,'exec')",
  "except SyntaxError as e: print(f'{p}:{e.lineno}:{e.offset or 1}: error: {e.msg}'); sys.exit(1)",
].join("\n");

const TYPESCRIPT = [".ts", ".tsx", ".mts", ".cts"];

/** Finds the checker of a file by its extension, once per extension. */
export class CheckerTable {
  #workspace: string;
  #programs: Programs;
  #own: readonly CheckerSettings[];
  #found = new Map<string, Checker | undefined>();

  /** `programs` finds them on the PATH shell commands get. */
  constructor(workspace: string, programs: Programs, own: readonly CheckerSettings[] = []) {
    this.#workspace = workspace;
    this.#programs = programs;
    this.#own = own;
  }

  /** Whether the person's own config names the checker of `file` (it then wins). */
  isOwn(file: string): boolean {
    const ext = extname(file).toLowerCase();
    return this.#own.some((checker) => checker.extensions.some((e) => e.toLowerCase() === ext));
  }

  /** The checker for `file`, if any; the first look for an extension checks the machine. */
  checkerFor(file: string): Checker | undefined {
    const ext = extname(file).toLowerCase();
    if (ext === "") return undefined;
    if (!this.#found.has(ext)) this.#found.set(ext, this.#find(ext));
    return this.#found.get(ext);
  }

  #find(ext: string): Checker | undefined {
    const own = this.#own.find((checker) =>
      checker.extensions.some((e) => e.toLowerCase() === ext)
    );
    if (own !== undefined) {
      const workspace = this.#workspace;
      return {
        name: own.name,
        format: own.format ?? "line",
        command: (file) => fillCommand(own.command, { file, workspace }),
        from: "workspace",
      };
    }
    const ws = this.#workspace;
    if (TYPESCRIPT.includes(ext)) {
      const config = ["deno.json", "deno.jsonc"].map((name) => join(ws, name)).find(existsSync);
      const deno = config === undefined ? undefined : this.#program("deno");
      if (config !== undefined && deno !== undefined) {
        return {
          name: "deno check",
          format: "deno",
          // Nothing is downloaded (a repository's import map could name any server), no lock
          // file is read or written, no colour codes.
          command: (file) =>
            `cd / && NO_COLOR=1 ${
              this.#line([deno, "check", "--cached-only", "--no-lock", "--config", config, file])
            }`,
          from: "/",
        };
      }
      const tsc = existsSync(join(ws, "tsconfig.json")) ? this.#program("tsc") : undefined;
      if (tsc !== undefined) {
        return {
          name: "tsc",
          format: "tsc",
          command: () => `cd / && ${this.#line([tsc, "--noEmit", "--pretty", "false", "-p", ws])}`,
          from: "/",
        };
      }
      return undefined;
    }
    if (ext === ".py" || ext === ".pyi") {
      // Not pyright by default: a project's pyrightconfig.json may name the interpreter it runs
      // (a venv of the repository's). The person may configure it as their own checker.
      const python = this.#program("python3");
      if (python === undefined) return undefined;
      return {
        name: "python syntax",
        format: "line",
        command: (file) => `cd / && ${this.#line([python, "-I", "-c", PYTHON_SYNTAX, file])}`,
        from: "/",
      };
    }
    if (ext === ".go") {
      const gofmt = this.#program("gofmt");
      if (gofmt === undefined) return undefined;
      return {
        name: "gofmt",
        format: "line",
        command: (file) => `cd / && ${this.#line([gofmt, "-e", file])} >/dev/null`,
        from: "/",
      };
    }
    if (ext === ".sh" || ext === ".bash") {
      const bash = this.#program("bash");
      if (bash === undefined) return undefined;
      return {
        name: "bash -n",
        format: "bash",
        command: (file) => `cd / && ${this.#line([bash, "-n", file])}`,
        from: "/",
      };
    }
    return undefined;
  }

  /**
   * The command line running `argv` with PATH cut to its folders outside the workspace: a
   * script's `#!/usr/bin/env node` (tsc) or a shim's own lookups find no program of the
   * repository's either.
   */
  #line(argv: readonly string[]): string {
    return `PATH=${shellJoin([this.#programs.safePath()])} ${shellJoin(argv)}`;
  }

  #program(name: string): string | undefined {
    return this.#programs.find(name);
  }
}

/**
 * The person's checker `command` with `{file}` and `{workspace}` replaced, each quoted, in one
 * pass: a file named `a{workspace}.ts` keeps its name, where a second pass over the first's
 * result would put the workspace's quoted path inside the file's quotes and unquote it.
 */
export function fillCommand(command: string, values: { file: string; workspace: string }): string {
  return command.replace(
    /\{(file|workspace)\}/g,
    (_, name: "file" | "workspace") => shellJoin([values[name]]),
  );
}
