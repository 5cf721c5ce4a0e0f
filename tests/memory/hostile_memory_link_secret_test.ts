/**
 * A repository's `MEMORY.md` (or `AGENTS.md`, `.tern/SYSTEM.md`, a prompt template) may be a link
 * to a file of the person's inside the workspace that holds a key (`MEMORY.md -> backend/.env`):
 * read for the system prompt (or a template's command), it is masked as a `read` of that file
 * is, so the model never learns the key it could then send somewhere.
 */
import { ok } from "node:assert/strict";
import { join } from "node:path";
import { loadResources, resourcePromptParts } from "../../src/memory/resources.ts";
import { memoryFilesPromptSection } from "../../src/memory/memory_files.ts";
import { keyMasker } from "../../src/sandbox/secrets.ts";
import { READ_ALL } from "../support/read_all.ts";

const HELD = "sk-heldkey0123456789abcdefghij";
const FORMAT = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

Deno.test("loadResources() masks held keys and key formats in memory, context and template files a link leads to", async () => {
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-memlink-" }));
  const ws = join(root, "ws");
  const home = join(root, "home");
  try {
    await Deno.mkdir(join(ws, "backend"), { recursive: true });
    await Deno.mkdir(join(ws, ".tern", "memory"), { recursive: true });
    await Deno.mkdir(home);
    await Deno.writeTextFile(join(ws, "backend", ".env"), `OTHER_KEY=${HELD}\nGH=${FORMAT}\n`);
    await Deno.symlink("backend/.env", join(ws, "MEMORY.md"));
    await Deno.symlink("backend/.env", join(ws, "AGENTS.md"));
    await Deno.symlink("../backend/.env", join(ws, ".tern", "SYSTEM.md"));
    await Deno.writeTextFile(join(ws, ".tern", "memory", "keys.md"), `# token ${FORMAT}\n`);
    await Deno.writeTextFile(join(home, "memory.md"), `my key ${HELD}\n`);
    await Deno.mkdir(join(ws, ".tern", "prompts"));
    await Deno.symlink("../../backend/.env", join(ws, ".tern", "prompts", "deploy.md"));
    const masker = keyMasker({ apiKey: HELD });
    const options = { personal: true, mask: (text: string) => masker.mask(text) };
    const resources = await loadResources(ws, home, READ_ALL, options);
    const parts = resourcePromptParts(resources);
    const sent = [
      parts.instructions ?? "",
      ...parts.contextFiles.map((file) => file.text),
      memoryFilesPromptSection(resources.memory) ?? "",
      ...resources.templates.map((template) => template.body),
    ].join("\n");
    ok(resources.templates.some((template) => template.name === "deploy"));
    ok(sent.includes("OTHER_KEY="), sent);
    ok(sent.includes("keys.md"), sent);
    ok(!sent.includes(HELD), sent);
    ok(!sent.includes(FORMAT), sent);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
