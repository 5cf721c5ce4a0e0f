/**
 * The interactive session attaches images named in a message: `@shot.png` mentions and pasted
 * absolute paths go to the model as image parts (driven in line mode against the scripted
 * server); images outside the workspace, through a symbolic link out, or not images at all are
 * refused with a note and the message still goes, without them.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { withScriptedServer } from "../support/scripted_server.ts";
import { runTernWithInput, tempWorkspace } from "../support/tern_process.ts";

/** A 1×1 PNG. */
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);
const PNG_BASE64 = btoa(String.fromCharCode(...PNG));

type Block = { type: string; text?: string; source?: { data: string; media_type: string } };

/** The content blocks of the last user message of an Anthropic request body. */
function lastUser(body: Record<string, unknown>): Block[] {
  const users = (body.messages as { role: string; content: string | Block[] }[])
    .filter((m) => m.role === "user");
  const content = users.at(-1)!.content;
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

Deno.test("interactive session: @image mentions and pasted image paths attach the image; paths out are refused", async () => {
  const ws = await tempWorkspace();
  try {
    await Deno.writeFile(join(ws.dir, "shot.png"), PNG);
    await Deno.writeFile(join(ws.dir, "my shot.png"), PNG);
    await Deno.writeTextFile(join(ws.dir, "notes.txt"), "the notes\n");
    await Deno.writeTextFile(join(ws.dir, "fake.png"), "not an image\n");
    // Sparse: a file named like an image, over the limit, must be refused before it is read.
    using big = await Deno.open(join(ws.dir, "big.png"), { write: true, create: true });
    await big.truncate(6 * 1024 * 1024);
    const outside = join(ws.home, "secret.png");
    await Deno.writeFile(outside, PNG);
    await Deno.symlink(outside, join(ws.dir, "link.png"));
    const real = await Deno.realPath(ws.dir);
    await withScriptedServer(
      [{ text: "One." }, { text: "Two." }, { text: "Three." }],
      async (server) => {
        const env = {
          HOME: ws.home,
          TERN_HOME: join(ws.home, ".tern"),
          ANTHROPIC_API_KEY: "k",
          NO_COLOR: "1",
        };
        const input = [
          "what is in @shot.png, see @notes.txt",
          `compare '${join(real, "my shot.png")}' please`,
          `and @link.png @fake.png ${outside} @big.png`,
        ].join("\n") + "\n";
        const args = [
          "--provider",
          "anthropic",
          "--base-url",
          server.baseUrl,
          "--model",
          "claude-sonnet-4-5",
        ];
        const run = await runTernWithInput(args, input, { cwd: ws.dir, env });
        equal(run.code, 0, run.stderr);
        equal(server.requests.length, 3, run.stdout);
        const [first, second, third] = server.requests.map((r) => lastUser(r.body));
        // The mention: the image as an image part, the text file still as a block.
        const images = (blocks: Block[]) => blocks.filter((b) => b.type === "image");
        equal(images(first).length, 1, JSON.stringify(first));
        equal(images(first)[0].source!.data, PNG_BASE64);
        ok(first.some((b) => b.text?.includes("the notes")), JSON.stringify(first));
        ok(!run.stdout.includes("@shot.png: binary file"), run.stdout);
        // The pasted path (quoted, with a space).
        equal(images(second).length, 1, JSON.stringify(second));
        // The symbolic link out, the non-image and the path outside: none sent, each said.
        equal(images(third).length, 0, JSON.stringify(third));
        ok(/Cannot attach image "link\.png"/.test(run.stdout), run.stdout);
        ok(/Cannot attach image "fake\.png": not a PNG/.test(run.stdout), run.stdout);
        ok(run.stdout.includes(`Cannot attach image "${outside}"`), run.stdout);
        ok(/Cannot attach image "big\.png": 6\.0 MB is over the 5\.0 MB limit/.test(run.stdout));
      },
    );
  } finally {
    await ws.cleanup();
  }
});
