/**
 * A skill whose `SKILL.md` holds a key (a command copied `.env` into it, or it is a link to a
 * file of the person's with a frontmatter): `tern run --skill` and `/skill:name` put its body
 * before the task with the keys tern holds and the key formats masked, as the `skill` tool's
 * result and a prompt template's message are.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern } from "../support/tern_process.ts";

const HELD = "sk-heldkey0123456789abcdefghij";
const FORMAT = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

for (const how of ["--skill", "/skill:"] as const) {
  Deno.test(`tern run ${how} masks the keys a skill's body holds`, async () => {
    const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-skill-keys-" }));
    let requests = "";
    const server = await startScriptedServer(
      ((request: ModelRequest) => {
        requests += JSON.stringify(request);
        return { text: "done" };
      }) as unknown as ScriptedReply[],
      { chunkDelayMs: 0 },
    );
    try {
      const ws = join(root, "ws");
      const home = join(root, "home");
      await Deno.mkdir(join(ws, ".agents", "skills", "deploy"), { recursive: true });
      await Deno.mkdir(home);
      await Deno.writeTextFile(
        join(ws, ".agents", "skills", "deploy", "SKILL.md"),
        `---\nname: deploy\ndescription: Deploy\n---\nUse SKILL_BODY with\nOTHER=${HELD}\nGH=${FORMAT}\n`,
      );
      const task = how === "--skill" ? ["--skill", "deploy", "go"] : ["/skill:deploy go"];
      const run = await runTern(
        ["run", "--base-url", server.baseUrl, "-m", "scripted", ...task],
        { cwd: ws, env: { TERN_HOME: home, HOME: home, TERN_API_KEY: HELD } },
      );
      equal(run.code, 0, run.stderr);
      ok(requests.includes("SKILL_BODY"), "the skill's body was not sent");
      ok(!requests.includes(HELD), "the held key reached the model");
      ok(!requests.includes(FORMAT), "the token reached the model");
    } finally {
      await server.close();
      await Deno.remove(root, { recursive: true });
    }
  });
}

Deno.test("loadResources() masks a prompt template's argument defaults, which join its message", async () => {
  const { loadResources } = await import("../../src/memory/resources.ts");
  const { renderTemplate } = await import("../../src/memory/templates.ts");
  const { READ_ALL } = await import("../support/read_all.ts");
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-template-keys-" }));
  try {
    const ws = join(root, "ws");
    await Deno.mkdir(join(ws, ".tern", "prompts"), { recursive: true });
    await Deno.writeTextFile(
      join(ws, ".tern", "prompts", "ship.md"),
      `---\ndescription: Ship\nargs:\n  - name: token\n    default: ${FORMAT}\n---\nShip with {{token}}\n`,
    );
    const mask = (text: string) => text.replaceAll(FORMAT, "[REDACTED]");
    const resources = await loadResources(ws, join(root, "home"), READ_ALL, { mask });
    const [template] = resources.templates;
    equal(renderTemplate(template, ""), "Ship with [REDACTED]\n");
    ok(!JSON.stringify(template).includes(FORMAT));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
