/**
 * A session's image folder holds each image under its SHA-256: `storeImages()` skips an image
 * whose data is not base64 (one bad image never fails the turn), and `withStoredImages()` sends a
 * stored image only while it passes today's image checks.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../../src/core/image_part.ts";
import type { ImagePart, UserMessage } from "../../src/core/messages.ts";
import { createOpenAiChatProvider } from "../../src/llm/openai_chat.ts";
import { storeImages, withStoredImages } from "../../src/session/images.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import { tempHome } from "./_helpers.ts";

/** A 1×1 PNG. */
const PNG = Uint8Array.fromBase64(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
);

/** The PNG with its header claiming `width` pixels across. */
function claimingWidth(width: number): Uint8Array {
  const bytes = PNG.slice();
  new DataView(bytes.buffer).setUint32(16, width);
  return bytes;
}

function user(images: ImagePart[]): UserMessage {
  return { role: "user", content: "look", images };
}

Deno.test("storeImages() skips an image whose data is not base64, warns, and stores the rest", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const folder = join(home, "images");
    const good = await sha256Hex(PNG);
    const bad = "a".repeat(64);
    const warnings: string[] = [];
    const stored = storeImages(
      user([
        { mediaType: "image/png", data: "not base64!!", sha256: bad },
        { mediaType: "image/png", data: PNG.toBase64(), sha256: good },
      ]),
      folder,
      { warn: (text) => warnings.push(text) },
    );
    deepEqual(stored.images!.map((image) => image.data), ["", ""]);
    deepEqual(await Deno.readFile(join(folder, good)), PNG);
    ok(!(await exists(join(folder, bad))));
    equal(warnings.length, 1);
    match(warnings[0], /^Cannot store image aaaaaaaaaaaa: its data is not base64$/);
  } finally {
    await cleanup();
  }
});

Deno.test("withStoredImages() leaves out a stored image that today's image checks refuse", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const folder = join(home, "images");
    await Deno.mkdir(folder, { mode: 0o700 });
    // Stored by a tern before the checks: a side over the limit, and a PNG without image data.
    const oversized = claimingWidth(9000);
    const hollowBytes = new Uint8Array([...PNG.slice(0, 33), ...PNG.slice(PNG.length - 12)]);
    const parts: ImagePart[] = [];
    for (const bytes of [oversized, hollowBytes, PNG]) {
      const sha256 = await sha256Hex(bytes);
      await Deno.writeFile(join(folder, sha256), bytes, { mode: 0o600 });
      parts.push({ mediaType: "image/png", data: "", sha256 });
    }
    await withScriptedServer([{ text: "ok" }], async (server) => {
      const provider = withStoredImages(
        createOpenAiChatProvider({ baseUrl: server.baseUrl, apiKey: "sk-test" }),
        folder,
      );
      for await (const _ of provider.stream({ model: "m", messages: [user(parts)], tools: [] })) {
        // Drained.
      }
      const body = JSON.stringify(server.requests.at(-1)!.body);
      ok(!body.includes(oversized.toBase64()), "the oversized image is not sent");
      ok(!body.includes(hollowBytes.toBase64()), "the hollow image is not sent");
      ok(body.includes(PNG.toBase64()), "a sound stored image still goes out");
      match(body, new RegExp(`image ${parts[0].sha256.slice(0, 12)} is not an image tern sends`));
      match(body, /9000×1 pixels, over the 8000-pixel limit/);
      match(body, new RegExp(`image ${parts[1].sha256.slice(0, 12)} is not an image tern sends`));
      match(body, /not a whole image: no image data \(IDAT\)/);
    });
  } finally {
    await cleanup();
  }
});

Deno.test("withStoredImages() sends a stored image only as the media type it is, however often it is named", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const folder = join(home, "images");
    await Deno.mkdir(folder, { mode: 0o700 });
    const sha256 = await sha256Hex(PNG);
    await Deno.writeFile(join(folder, sha256), PNG, { mode: 0o600 });
    // An older line names the same file as a GIF; the newest (checked first) names it rightly.
    const messages = [
      user([{ mediaType: "image/gif", data: "", sha256 }]),
      user([{ mediaType: "image/png", data: "", sha256 }]),
      user([{ mediaType: "image/gif", data: PNG.toBase64(), sha256 }]),
      user([{ mediaType: "image/png", data: PNG.toBase64(), sha256 }]),
    ];
    await withScriptedServer([{ text: "ok" }, { text: "ok" }], async (server) => {
      const provider = withStoredImages(
        createOpenAiChatProvider({ baseUrl: server.baseUrl, apiKey: "sk-test" }),
        folder,
      );
      for (let i = 0; i < 2; i++) {
        for await (const _ of provider.stream({ model: "m", messages, tools: [] })) {
          // Drained.
        }
        const body = JSON.stringify(server.requests.at(-1)!.body);
        ok(!body.includes("data:image/gif"), "never sent as a GIF");
        equal(body.split(`data:image/png;base64,${PNG.toBase64()}`).length - 1, 2);
        equal(body.split("a PNG image recorded as image/gif").length - 1, 2);
      }
    });
  } finally {
    await cleanup();
  }
});

Deno.test("withStoredImages() leaves out an inline image whose base64 is not as tern writes it", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const sha256 = await sha256Hex(PNG);
    const unpadded = PNG.toBase64().replace(/=+$/, "");
    await withScriptedServer([{ text: "ok" }], async (server) => {
      const provider = withStoredImages(
        createOpenAiChatProvider({ baseUrl: server.baseUrl, apiKey: "sk-test" }),
        join(home, "images"),
      );
      const messages = [user([{ mediaType: "image/png", data: unpadded, sha256 }])];
      for await (const _ of provider.stream({ model: "m", messages, tools: [] })) {
        // Drained.
      }
      const body = JSON.stringify(server.requests.at(-1)!.body);
      ok(!body.includes(`base64,${unpadded}`), "the unpadded data is not sent");
      match(body, /its data is not plain base64/);
    });
  } finally {
    await cleanup();
  }
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}
