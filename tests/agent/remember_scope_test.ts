/**
 * "Allow for this session" remembers a prefix (`bash:python3`), wider than the one call the
 * person sees: the dialog and the terminal question say how much it allows.
 */
import { equal, ok } from "node:assert/strict";
import { reviewRequestFor } from "../../src/agent/call_facts.ts";
import { terminalQuestion } from "../../src/cli/ask_person.ts";
import { SecretMasker } from "../../src/sandbox/secrets.ts";
import { classifyShell } from "../../src/sandbox/shell/classify.ts";
import { permissionDialog } from "../../src/tui/dialogs.ts";
import { themeFor } from "../../src/tui/theme.ts";

const verdict = { action: "ask" as const, by: "classifier" as const, reason: "runs a program" };

async function requestFor(command: string) {
  const facts = { tool: "bash", readOnlyTool: false, shell: await classifyShell(command) };
  return reviewRequestFor("bash", { command }, facts, verdict, ":workspace", new SecretMasker());
}

Deno.test("allow for this session says which commands it covers, in the dialog and the terminal", async () => {
  for (
    const [command, covers] of [
      ["python3 setup.py build", 'any "python3 …" command'],
      ["npm run build", 'any "npm run …" command'],
      ["rm -rf build", 'any "rm …" command'],
    ]
  ) {
    const request = await requestFor(command);
    equal(request.rememberable, true);
    equal(request.rememberAs, covers);
    const shown = permissionDialog(request, { theme: themeFor(false) }).render(100, 40).join("\n");
    ok(shown.includes(`[a] allows ${covers}`), shown);
    ok(terminalQuestion(request).includes(`[a] allow for this session (${covers})`));
  }
  // Two commands have no key: nothing to remember, nothing said.
  const two = await requestFor("git status; rm -rf x");
  equal(two.rememberable, false);
  equal(two.rememberAs, undefined);
  ok(!terminalQuestion(two).includes("[a]"));
});
