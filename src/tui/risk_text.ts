/**
 * The policy's reason for asking, in plain language: the classifier's label ("runs-code",
 * "destructive") becomes what it means for the person, and hidden code is named by what the
 * command contains ("contains `$(…)`: tern cannot check what it will run").
 */

/** What each classifier label means, when a reason gives no details. */
const LABELS: Record<string, string> = {
  "read-only": "only reads",
  "writes-files": "changes files",
  "network": "uses the network",
  "runs-code": "runs code tern cannot check",
  "destructive": "can destroy data: check what it deletes or discards",
  "privileged": "runs as another user",
  "unknown": "tern does not know what this command does",
};

/** What a piece of hidden code looks like in the command. */
const HIDDEN: Record<string, string> = {
  "command substitution": "`$(…)`",
  "process substitution": "`<(…)`",
  "eval": "`eval`",
  "source": "`source`",
  "trap": "`trap`",
  "function definition": "a function definition",
  "arithmetic on a variable": "arithmetic on a variable",
};

/**
 * `reason` (a policy reason, e.g. `runs-code: hides code: command substitution; "x" is not
 * known to be read-only`) as one plain sentence per finding. A reason without a label is
 * returned as it is, as one line.
 */
export function plainRisk(reason: string): string[] {
  const match =
    /^(read-only|writes-files|network|runs-code|destructive|privileged|unknown)(?:: (.*))?$/s
      .exec(reason.trim());
  if (!match) return [reason];
  const [, label, details] = match;
  if (details === undefined || details.trim() === "") return [capital(LABELS[label])];
  const lines = details.split("; ").map(plainFinding);
  return [...new Set(lines)];
}

function plainFinding(finding: string): string {
  const hidden = /^hides code: (.*)$/s.exec(finding);
  if (hidden) {
    const what = HIDDEN[hidden[1]] ?? `\`${hidden[1]}\``;
    return `contains ${what}: tern cannot check what it will run`;
  }
  const unknown = /^"(.*)" is not known to be read-only$/s.exec(finding);
  if (unknown) return `tern does not know what "${unknown[1]}" does`;
  return finding;
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
