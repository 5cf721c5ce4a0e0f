/** tern's version, printed by `tern --version` and written into session headers. */
export const VERSION = "0.1.0";

/** How the running tern was built: from main.ts, bin/build's bundle, or `deno compile`. */
export type BuildKind = "source" | "bundle" | "compiled";

/**
 * The build kind of the module at `moduleUrl` (this file's own URL when running): a compiled
 * binary runs its modules from a `deno-compile-<name>` folder, the bundle is JavaScript, and
 * main.ts's sources are TypeScript.
 */
export function buildKind(moduleUrl: string): BuildKind {
  const path = new URL(moduleUrl).pathname;
  if (path.split("/").some((part) => part.startsWith("deno-compile-"))) return "compiled";
  return path.endsWith(".js") ? "bundle" : "source";
}

/**
 * The line `tern --version` prints, e.g. `tern 0.1.0 (deno 2.9.6, source)`. bin/tern prints
 * the same line without starting Deno (tests/cli/launcher_test.ts keeps the two equal).
 */
export function versionLine(moduleUrl: string = import.meta.url): string {
  return `tern ${VERSION} (deno ${Deno.version.deno}, ${buildKind(moduleUrl)})`;
}
