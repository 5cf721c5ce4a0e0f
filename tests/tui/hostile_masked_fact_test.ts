/**
 * A hostile model writes a command whose dangerous part reads as a key to tern's masker, so the
 * permission question would show `echo token=[REDACTED:secret]` while the shell runs
 * `touch ~/x`. The dialog must say that part of the call is hidden.
 */
import { equal, ok } from "node:assert/strict";
import type { ReviewRequest } from "../../src/sandbox/review.ts";
import { SecretMasker } from "../../src/sandbox/secrets.ts";
import { permissionDialog } from "../../src/tui/dialogs.ts";
import { themeFor } from "../../src/tui/theme.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";

await loadRenderers();

const plain = themeFor(false);
const masker = new SecretMasker();
const WARNING = "Part of this call is hidden as a key: deny if unsure";

/** A bash call's request as the permission gate builds it: summary and arguments masked. */
function bashRequest(command: string): ReviewRequest {
  return {
    tool: "bash",
    args: masker.maskDeep({ command }),
    summary: masker.mask(command),
    command: true,
    reason: "runs a command",
    profile: ":workspace",
    rememberable: false,
  };
}

Deno.test("permissionDialog() says so when shell syntax in a command was hidden as a key", () => {
  for (
    const command of [
      // `$IFS` spaces: the whole pipe is one `secret` value.
      "echo token=abc123|touch$IFS~/x",
      // A private key's header hides everything after it, lines included.
      "echo '-----BEGIN PRIVATE KEY-----'\nrm -rf ~",
    ]
  ) {
    const request = bashRequest(command);
    ok(!request.summary.includes("~"), `the masker hid the payload: ${request.summary}`);
    for (const height of [8, 12, 40]) {
      const lines = permissionDialog(request, { theme: plain }).render(60, height);
      ok(lines.length <= height, `${lines.length} rows in ${height}`);
      const at = lines.findIndex((line) => line.startsWith(WARNING));
      equal(at, 1, `height ${height}: the warning is the first fact:\n${lines.join("\n")}`);
      ok(
        lines.some((line) => line.startsWith("echo ")),
        `height ${height}: the command's first row stays in sight:\n${lines.join("\n")}`,
      );
    }
  }
});

Deno.test("permissionDialog() shows no such warning when nothing was hidden", () => {
  const lines = permissionDialog(bashRequest("echo hello | wc -c"), { theme: plain }).render(
    60,
    20,
  );
  ok(!lines.some((line) => line.includes(WARNING)), lines.join("\n"));
});
