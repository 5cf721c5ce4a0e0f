/**
 * `/model` takes a name only as the settings' own rule takes it (`--model`, TERN_MODEL): a name
 * with a control or invisible character (pasted from a page, or listed by a model server) is
 * refused with the character shown, and the model stays as it was. Taken, it would be shown in
 * the status line as another name than the one sent.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { withScriptedServer } from "../support/scripted_server.ts";
import { runTernWithInput, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern /model refuses a name with an invisible or control character and keeps the model", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer([{ text: "Answered." }], async (server) => {
      const env = {
        HOME: ws.home,
        TERN_HOME: join(ws.home, ".tern"),
        TERN_BASE_URL: server.baseUrl,
        TERN_MODEL: "scripted-model",
        TERN_API_KEY: "sk-model-names-secret",
        NO_COLOR: "1",
      };
      const input = [
        "/model scripted-model\u200b",
        "/model other\x1b]52;c;aGk=\x07model",
        "/model openai/",
        "hello",
      ].join("\n") + "\n";
      const run = await runTernWithInput([], input, { cwd: ws.dir, env });
      equal(run.code, 2, run.stderr);
      const out = run.stdout;
      ok(out.includes('Cannot switch to model "scripted-model⟨U+200B⟩"'), out);
      ok(out.includes('Cannot switch to model "other␛]52;c;aGk=␇model"'), out);
      ok(out.includes('Cannot switch to model ""'), out);
      ok(!out.includes("• model:"), out);
      equal(server.requests.length, 1);
      equal(server.requests[0].body.model, "scripted-model");
    });
  } finally {
    await ws.cleanup();
  }
});
