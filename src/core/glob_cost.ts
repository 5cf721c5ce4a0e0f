/**
 * How costly a glob pattern is to match. picomatch (the glob tool, the person's path rules)
 * turns a pattern into a regular expression that backtracks: a name is tried in about
 * length^(wildcards - 1) ways for the `*` of one part, and a path in about depth^(globstars)
 * ways for its `**` parts. `**` followed by six `*` in one part took 2.5 s on one 60-character
 * name; eight wildcards run for hours, on the thread that checks every call's paths.
 */

/** Most `*` wildcards one part of a pattern (between slashes) may hold. */
export const MAX_PART_WILDCARDS = 3;

/** Most `**` parts a pattern may hold (real ones hold one or two). */
export const MAX_GLOBSTARS = 2;

/**
 * Why matching `pattern` could backtrack for minutes, as a phrase ("holds 4 `*` between two
 * slashes, more than 3"); undefined when it cannot.
 */
export function costlyGlob(pattern: string): string | undefined {
  const parts = pattern.split("/");
  const globstars = parts.filter((part) => part === "**").length;
  if (globstars > MAX_GLOBSTARS) {
    return `holds ${globstars} "**" parts, more than ${MAX_GLOBSTARS}`;
  }
  const wildcards = Math.max(
    0,
    ...parts.map((part) => part === "**" ? 0 : part.match(/\*+/g)?.length ?? 0),
  );
  if (wildcards > MAX_PART_WILDCARDS) {
    return `holds ${wildcards} "*" between two slashes, more than ${MAX_PART_WILDCARDS}`;
  }
  return undefined;
}
