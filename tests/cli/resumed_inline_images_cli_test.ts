/**
 * End-to-end: a session line may carry an image inline (base64 in the line, as a hand-made or
 * older session file does) instead of by hash in the session folder. A resumed session sends
 * such an image only when it passes today's image checks, as a stored one: a header claiming
 * 100000×100000 pixels, a cut-short PNG and a GIF recorded as a PNG are each left out with a
 * note (a provider would refuse them, failing every later request), and a sound one goes out.
 */
import { equal, ok } from "node:assert/strict";
import { withScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

/** A 1×1 PNG. */
const PNG = Uint8Array.fromBase64(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
);
/** A 1×1 GIF. */
const GIF = Uint8Array.fromBase64("R0lGODlhAQABAIAAAP///wAAACwAAAAAAQABAAACAkQBADs=");

/** The PNG with a header claiming 100000×100000 pixels (a decompression bomb's shape). */
function claimingHuge(): Uint8Array {
  const bytes = PNG.slice();
  new DataView(bytes.buffer).setUint32(16, 100_000);
  new DataView(bytes.buffer).setUint32(20, 100_000);
  return bytes;
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("tern run -c sends no inline session image that today's image checks refuse", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer([{ text: "hi" }, { text: "ok" }], async (server) => {
      const env = { TERN_HOME: ws.home, HOME: ws.home, OPENAI_API_KEY: "k" };
      const args = ["run", "--base-url", server.baseUrl, "-m", "gpt-4.1", "-o", "json"];
      const first = await runTern([...args, "hello"], { cwd: ws.dir, env });
      equal(first.code, 0, first.stderr);
      const sessionPath = JSON.parse(first.stdout).sessionPath as string;
      const lines = (await Deno.readTextFile(sessionPath)).trimEnd().split("\n");
      const last = JSON.parse(lines.at(-1)!) as { id: string; timestamp: string };

      // A line written by hand: every image base64 of the bytes its hash names.
      const hostile = [
        { name: "huge", bytes: claimingHuge(), mediaType: "image/png" },
        { name: "cut", bytes: PNG.slice(0, PNG.length - 12), mediaType: "image/png" },
        { name: "gif", bytes: GIF, mediaType: "image/png" },
      ];
      const images = [];
      for (const { bytes, mediaType } of [...hostile, { bytes: PNG, mediaType: "image/png" }]) {
        images.push({ mediaType, data: bytes.toBase64(), sha256: await sha256(bytes) });
      }
      const line = {
        type: "message",
        id: "planted",
        parentId: last.id,
        timestamp: last.timestamp,
        message: { role: "user", content: "look at these", images },
      };
      await Deno.writeTextFile(sessionPath, JSON.stringify(line) + "\n", { append: true });

      const again = await runTern([...args, "-c", "and now?"], { cwd: ws.dir, env });
      equal(again.code, 0, again.stderr);
      const body = JSON.stringify(server.requests[1].body);
      for (const { name, bytes } of hostile) {
        ok(!body.includes(bytes.toBase64()), `the ${name} image is not sent`);
      }
      ok(body.includes(`data:image/png;base64,${PNG.toBase64()}`), "the sound image goes out");
      ok(body.includes("100000×100000 pixels, over the 8000-pixel limit of a side"), body);
      ok(body.includes("not a whole image: cut short"), body);
      ok(body.includes("a GIF image recorded as image/png"), body);
    }, { chunkDelayMs: 0 });
  } finally {
    await ws.cleanup();
  }
});
