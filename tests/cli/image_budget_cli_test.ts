/**
 * End-to-end: how many image bytes a request carries. A request keeps the newest images that
 * fit `MAX_IMAGE_CHARS_PER_REQUEST` (and `MAX_IMAGES_PER_REQUEST`), older ones becoming a note:
 * model servers refuse a larger request, and the newest round is what compaction never cuts, so
 * one round of large images would otherwise be refused at every try. A round of many image reads
 * lets go of the older ones as they arrive, and the session records notes for them.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { MAX_IMAGE_CHARS_PER_REQUEST } from "../../src/core/image_budget.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const ONE_PIXEL_PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

/** A whole PNG of about `size` bytes: the one pixel, then an ancillary chunk of `fill`. */
function bigPng(size: number, fill: number): Uint8Array {
  const head = ONE_PIXEL_PNG.subarray(0, ONE_PIXEL_PNG.length - 12);
  const end = ONE_PIXEL_PNG.subarray(ONE_PIXEL_PNG.length - 12);
  const data = size - ONE_PIXEL_PNG.length - 12;
  const chunk = new Uint8Array(12 + data).fill(fill);
  new DataView(chunk.buffer).setUint32(0, data);
  chunk.set([0x7a, 0x66, 0x69, 0x6c], 4); // "zfil": ancillary, private
  const png = new Uint8Array(head.length + chunk.length + end.length);
  png.set(head);
  png.set(chunk, head.length);
  png.set(end, head.length + chunk.length);
  return png;
}

/** Three images, each under the 5 MB limit, two of which fit a request and three do not. */
const SIZE = 3_600_000;
const NAMES = ["a.png", "b.png", "c.png"];
const base64Chars = Math.ceil(SIZE / 3) * 4;
ok(2 * base64Chars <= MAX_IMAGE_CHARS_PER_REQUEST && 3 * base64Chars > MAX_IMAGE_CHARS_PER_REQUEST);

type Block = { type: string; content?: unknown; text?: string; source?: { data: string } };

/** The images of an Anthropic request's tool results, as their first data bytes, and notes. */
function carried(body: Record<string, unknown>): { images: string[]; notes: number } {
  const results = (body.messages as { content: Block[] | string }[])
    .flatMap((m) => typeof m.content === "string" ? [] : m.content)
    .filter((b) => b.type === "tool_result");
  const blocks = results.flatMap((b) => Array.isArray(b.content) ? b.content as Block[] : []);
  const images = blocks.filter((b) => b.type === "image").map((b) =>
    // The filler byte, read from past the one pixel's head.
    atob(b.source!.data.slice(1_000, 1_004)).charCodeAt(0).toString()
  );
  // A result without an image is text alone.
  const texts = [
    ...blocks.filter((b) => b.type === "text").map((b) => b.text!),
    ...results.flatMap((b) => typeof b.content === "string" ? [b.content] : []),
  ];
  const notes = texts.map((text) => text.split("an older image was left out").length - 1)
    .reduce((sum, n) => sum + n, 0);
  return { images, notes };
}

async function withImages(body: (ws: { dir: string; home: string }) => Promise<void>) {
  const ws = await tempWorkspace();
  try {
    for (const [i, name] of NAMES.entries()) {
      await Deno.writeFile(join(ws.dir, name), bigPng(SIZE, 0x41 + i));
    }
    await body(ws);
  } finally {
    await ws.cleanup();
  }
}

const read = (name: string, id: string) => ({
  id,
  name: "read",
  arguments: JSON.stringify({ path: name }),
});

function runArgs(baseUrl: string, ...rest: string[]): string[] {
  return [
    "run",
    "--provider",
    "anthropic",
    "--base-url",
    baseUrl,
    "--model",
    "claude-sonnet-4-5",
    "--mode",
    "bypass",
    "-o",
    "json",
    ...rest,
  ];
}

Deno.test("tern run: one reply's image reads reach the model as the newest that fit a request, the session recording notes for the rest", async () => {
  await withImages(async (ws) => {
    const script = [{ toolCalls: NAMES.map((name, i) => read(name, `c${i}`)) }, { text: "seen" }];
    await withScriptedServer(script, async (server) => {
      const env = { TERN_HOME: ws.home, HOME: ws.home, ANTHROPIC_API_KEY: "k" };
      const run = await runTern(runArgs(server.baseUrl, "look"), { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
      // "B" and "C" (fillers 0x42, 0x43), the newest two; "A" left out with a note.
      const { images, notes } = carried(server.requests[1].body);
      equal(images.join(), "66,67");
      equal(notes, 1);
      const session = await Deno.readTextFile(JSON.parse(run.stdout).sessionPath);
      equal(session.split("an older image was left out").length - 1, 1, "the session's note");
    }, { chunkDelayMs: 0 });
  });
});

Deno.test("tern run: images read over several rounds, and a resumed session, send the newest that fit a request", async () => {
  await withImages(async (ws) => {
    const script = [
      ...NAMES.map((name, i) => ({ toolCalls: [read(name, `c${i}`)] })),
      { text: "seen" },
      { text: "still seen" },
    ];
    await withScriptedServer(script, async (server) => {
      const env = { TERN_HOME: ws.home, HOME: ws.home, ANTHROPIC_API_KEY: "k" };
      const run = await runTern(runArgs(server.baseUrl, "look"), { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
      const last = carried(server.requests[3].body);
      equal(last.images.join(), "66,67");
      equal(last.notes, 1);
      // The session holds all three (by hash); a resumed request reads back the newest two.
      const session = await Deno.readTextFile(JSON.parse(run.stdout).sessionPath);
      equal(session.split("an older image was left out").length - 1, 0);
      const again = await runTern(runArgs(server.baseUrl, "-c", "and now?"), {
        cwd: ws.dir,
        env,
      });
      equal(again.code, 0, again.stderr);
      const resumed = carried(server.requests[4].body);
      equal(resumed.images.join(), "66,67");
      equal(resumed.notes, 1);
    }, { chunkDelayMs: 0 });
  });
});
