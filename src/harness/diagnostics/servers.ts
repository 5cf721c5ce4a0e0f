/**
 * Which language server looks at a changed file, found by the project's markers: `deno lsp`
 * for TypeScript in a workspace with deno.json, `typescript-language-server` for one with
 * tsconfig.json; `pyright`, `gopls` and `rust-analyzer` only when the person's config names
 * them (`diagnostics.languageServers`): those read project files that choose programs they run
 * (a venv's interpreter, cargo's and go's configuration, build scripts, proc macros). Without
 * a server, the one-shot checker (checkers.ts) runs.
 *
 * As for the checkers, a server is never a program of the repository's: it is looked up on
 * PATH outside the workspace, named by its absolute path, and started by `/usr/bin/env` with
 * PATH cut to the folders outside the workspace. A project's config cannot name or enable a
 * server (`diagnostics` is the person's setting only).
 */
import { existsSync } from "node:fs";
import { dirname, extname, join } from "../../core/path.ts";
import type { LanguageServerName } from "../../config/types.ts";
import type { ServerSpec } from "./language_server.ts";
import type { Programs } from "./programs.ts";

/** The servers used when the person's config says nothing. */
export const DEFAULT_SERVERS: readonly LanguageServerName[] = [
  "deno",
  "typescript-language-server",
];

const TYPESCRIPT = [".ts", ".tsx", ".mts", ".cts"];

/** Finds the language server of a file by its extension, once per extension. */
export class ServerTable {
  #workspace: string;
  #programs: Programs;
  #enabled: readonly LanguageServerName[];
  #found = new Map<string, ServerSpec | undefined>();

  constructor(
    workspace: string,
    programs: Programs,
    enabled: boolean | readonly LanguageServerName[] = true,
  ) {
    this.#workspace = workspace;
    this.#programs = programs;
    this.#enabled = enabled === true ? DEFAULT_SERVERS : enabled === false ? [] : enabled;
  }

  /** The server for `file`, if one is enabled and found; the first look checks the machine. */
  serverFor(file: string): ServerSpec | undefined {
    const ext = extname(file).toLowerCase();
    if (ext === "" || this.#enabled.length === 0) return undefined;
    if (!this.#found.has(ext)) this.#found.set(ext, this.#find(ext));
    return this.#found.get(ext);
  }

  #find(ext: string): ServerSpec | undefined {
    const ws = this.#workspace;
    const on = (name: LanguageServerName) => this.#enabled.includes(name);
    if (TYPESCRIPT.includes(ext)) {
      const config = ["deno.json", "deno.jsonc"].map((name) => join(ws, name)).find(existsSync);
      const deno = config !== undefined && on("deno") ? this.#programs.find("deno") : undefined;
      if (config !== undefined && deno !== undefined) {
        return {
          name: "deno lsp",
          // No look for a newer Deno (the sandbox may have no network), no colour codes.
          argv: this.#argv(deno, ["lsp"], ["DENO_NO_UPDATE_CHECK=1", "NO_COLOR=1"]),
          languageId: (file) => file.endsWith("x") ? "typescriptreact" : "typescript",
          // No linting (its findings are not type errors), nothing cached or downloaded.
          initializationOptions: { enable: true, lint: false, config, cacheOnSave: false },
          configuration: (section) =>
            section === "deno" ? { enable: true, lint: false, cacheOnSave: false } : null,
        };
      }
      if (!existsSync(join(ws, "tsconfig.json")) || !on("typescript-language-server")) {
        return undefined;
      }
      const server = this.#programs.find("typescript-language-server");
      const tsserver = server === undefined ? undefined : this.#tsserver(server);
      // Without a tsserver of its own it would load the workspace's node_modules/typescript.
      if (server === undefined || tsserver === undefined) return undefined;
      return {
        name: "typescript-language-server",
        argv: this.#argv(server, ["--stdio"]),
        languageId: (file) => file.endsWith("x") ? "typescriptreact" : "typescript",
        initializationOptions: {
          tsserver: { path: tsserver },
          disableAutomaticTypingAcquisition: true,
        },
        // It publishes syntax and semantic findings one after the other.
        settleMs: 300,
      };
    }
    if ((ext === ".py" || ext === ".pyi") && on("pyright")) {
      const pyright = this.#programs.find("pyright-langserver");
      if (pyright === undefined) return undefined;
      return {
        name: "pyright",
        argv: this.#argv(pyright, ["--stdio"]),
        languageId: () => "python",
        settleMs: 300,
      };
    }
    if (ext === ".go" && on("gopls")) {
      const gopls = this.#programs.find("gopls");
      if (gopls === undefined) return undefined;
      return { name: "gopls", argv: this.#argv(gopls, []), languageId: () => "go", settleMs: 300 };
    }
    if (ext === ".rs" && on("rust-analyzer")) {
      const ra = this.#programs.find("rust-analyzer");
      if (ra === undefined) return undefined;
      return {
        name: "rust-analyzer",
        argv: this.#argv(ra, []),
        languageId: () => "rust",
        settleMs: 300,
      };
    }
    return undefined;
  }

  /** `program` started by `env` with PATH cut to the folders outside the workspace. */
  #argv(program: string, args: string[], env: string[] = []): string[] {
    return ["/usr/bin/env", `PATH=${this.#programs.safePath()}`, ...env, program, ...args];
  }

  /** The tsserver next to `server`'s install or `tsc`'s, outside the workspace. */
  #tsserver(server: string): string | undefined {
    const tsc = this.#programs.find("tsc");
    const candidates = [
      join(dirname(server), "..", "node_modules", "typescript", "lib", "tsserver.js"),
      join(dirname(server), "..", "..", "typescript", "lib", "tsserver.js"),
      ...(tsc === undefined ? [] : [join(dirname(tsc), "..", "lib", "tsserver.js")]),
    ];
    for (const candidate of candidates) {
      const found = this.#programs.outside(candidate);
      if (found !== undefined) return found;
    }
    return undefined;
  }
}
