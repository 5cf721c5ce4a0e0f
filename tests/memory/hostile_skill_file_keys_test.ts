/**
 * A skill's file that holds a key (a command copied `.env` into the skill's folder): the `skill`
 * tool's answer reaches the model with the keys tern holds and the key formats masked, as a
 * `read` of it would, and without the characters a person cannot see.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern } from "../support/tern_process.ts";

const HELD = "sk-heldkey0123456789abcdefghij";
const FORMAT = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
const TAG_I = String.fromCodePoint(0xe0049);

Deno.test("tern run: the skill tool masks the keys a skill's file holds", async () => {
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-skill-file-keys-" }));
  const requests: string[] = [];
  const server = await startScriptedServer(
    ((request: ModelRequest) => {
      requests.push(JSON.stringify(request));
      return requests.length === 1
        ? {
          toolCalls: [{
            name: "skill",
            arguments: JSON.stringify({ name: "deploy", file: "notes.md" }),
          }],
        }
        : { text: "done" };
    }) as unknown as ScriptedReply[],
    { chunkDelayMs: 0 },
  );
  try {
    const ws = join(root, "ws");
    const home = join(root, "home");
    const dir = join(ws, ".agents", "skills", "deploy");
    await Deno.mkdir(dir, { recursive: true });
    await Deno.mkdir(home);
    await Deno.writeTextFile(join(dir, "SKILL.md"), "---\nname: deploy\ndescription: D\n---\nB\n");
    await Deno.writeTextFile(
      join(dir, "notes.md"),
      `NOTES_MARK${TAG_I}\nOTHER=${HELD}\nGH=${FORMAT}\n`,
    );
    const run = await runTern(
      ["run", "--base-url", server.baseUrl, "-m", "scripted", "deploy it"],
      { cwd: ws, env: { TERN_HOME: home, HOME: home, TERN_API_KEY: HELD, TERN_MODE: "bypass" } },
    );
    equal(run.code, 0, run.stderr);
    const answer = requests.at(-1)!;
    ok(answer.includes("NOTES_MARK"), "the skill's file was not sent");
    ok(!answer.includes(HELD), "the held key reached the model");
    ok(!answer.includes(FORMAT), "the token reached the model");
    ok(!answer.includes(TAG_I) && !answer.includes("\\udb40\\udc49"), "a tag character did");
  } finally {
    await server.close();
    await Deno.remove(root, { recursive: true });
  }
});
