/**
 * How a permission rule's `tool` and `path` match, shared by the policy's rules (rules.ts) and
 * the sandbox's view of the person's deny rules (denied_paths.ts), so both read a rule alike.
 */
// @ts-types="@types/picomatch"
import type Picomatch from "picomatch";

/** picomatch's options for a rule's `path`: dot files match like any other. */
export const RULE_PATH_OPTIONS: Picomatch.PicomatchOptions = { dot: true };

/**
 * The globs a rule's `path` stands for in the policy: the pattern without trailing slashes (a
 * folder is named with or without one), and for a deny or ask rule (`within`) also everything
 * below what it matches, as in `.gitignore`: a rule about `secrets` is about `secrets/key` too.
 * An allow rule covers exactly what it matches. The commands' view (denied_paths.ts) reads a
 * deny rule the same way.
 */
export function rulePathGlobs(pattern: string, within: boolean): string[] {
  const bare = pattern.length > 1 ? pattern.replace(/\/+$/, "") || "/" : pattern;
  return within ? [bare, `${bare}/**`] : [bare];
}

/**
 * A test of absolute paths for a deny rule's absolute `pattern`: true for a path it matches, one
 * below a match, and a folder that may hold a match (each of its parts matches the pattern's
 * part at that place, up to a `**`). A pattern with braces, which may hold a `/`, is read
 * from its folder before the first brace: every path there may hold a match.
 */
export function rulePathReach(
  pattern: string,
  picomatch: (glob: string, options: Picomatch.PicomatchOptions) => (path: string) => boolean,
): (path: string) => boolean {
  const bare = pattern.replace(/\/+$/, "");
  const braces = bare.indexOf("{");
  const written = braces === -1 ? bare : `${bare.slice(0, bare.lastIndexOf("/", braces))}/**`;
  const parts = written.split("/").filter((part) => part !== "").map((part) =>
    part === "**" ? undefined : picomatch(part, RULE_PATH_OPTIONS)
  );
  return (path) => {
    const names = path.split("/").filter((name) => name !== "");
    for (const [i, name] of names.entries()) {
      if (i >= parts.length || parts[i] === undefined) return true;
      if (!parts[i]!(name)) return false;
    }
    return true;
  };
}

/** A test of tool names against `pattern`, where `*` stands for any run of characters. */
export function toolMatcher(pattern: string): (name: string) => boolean {
  if (pattern === "*") return () => true;
  if (!pattern.includes("*")) return (name) => name === pattern;
  const parts = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  const regex = new RegExp(`^${parts.join(".*")}$`);
  return (name) => regex.test(name);
}
