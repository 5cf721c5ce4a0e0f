/**
 * A child's escalated call keeps the policy's reason as it is, so the parent's front ends read
 * its risk label ("destructive", "privileged") as they do for the parent's own calls; where it
 * comes from is told in its summary and its note.
 */
import { deepEqual, equal } from "node:assert/strict";
import { escalatedRequest } from "../../src/harness/subagents/escalation.ts";
import { noteLabel, type ReviewRequest } from "../../src/sandbox/review.ts";
import { plainRisk } from "../../src/tui/risk_text.ts";

function bash(command: string, reason: string): ReviewRequest {
  return {
    tool: "bash",
    args: { command },
    summary: command,
    command: true,
    reason,
    profile: ":workspace",
    rememberable: false,
  };
}

for (
  const reason of [
    "destructive",
    'destructive: "rm" deletes files; "x" is not known to be read-only',
    "privileged: runs as another user",
  ]
) {
  Deno.test(`escalatedRequest() keeps the risk label of "${reason}"`, async () => {
    const shown = await escalatedRequest("cleaner", bash("rm -rf build", reason), undefined);
    equal(shown.reason, reason);
    // Worded as the parent's own call would be (a label leading the reason is recognised).
    deepEqual(plainRisk(shown.reason), plainRisk(reason));
    equal(shown.summary, "[subagent cleaner] rm -rf build");
    equal(noteLabel(shown.note!), 'Asked by subagent "cleaner".');
  });
}

Deno.test("escalatedRequest() keeps a rule's note and names the subagent in it", async () => {
  const request: ReviewRequest = {
    ...bash("git push", "network: pushes"),
    note: { from: 'the ask rule command "git push" in /repo/.tern/config.jsonc', text: "check" },
  };
  const shown = await escalatedRequest("pusher", request, undefined);
  equal(shown.reason, "network: pushes");
  deepEqual(shown.note, {
    from: 'the ask rule command "git push" in /repo/.tern/config.jsonc, for subagent "pusher"',
    text: "check",
  });
});
