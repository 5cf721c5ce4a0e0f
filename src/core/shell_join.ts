/** Argv as a person reads it in a shell. */

/** Joins argv for display, quoting what the shell would split or expand. */
export function shellJoin(argv: readonly string[]): string {
  return argv.map((arg) => /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`)
    .join(" ");
}
