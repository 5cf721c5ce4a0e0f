/**
 * A tool worker's result may carry images (read of an image file); the host takes one only when
 * its data is base64 of an image of the media type it names, as it refuses any other malformed
 * message from the worker.
 */
import { deepEqual } from "node:assert/strict";
import { sha256Hex } from "../../src/core/image_part.ts";
import { MALFORMED_RESULT, parseChildMessage } from "../../src/sandbox/worker/protocol.ts";

/** A 1×1 PNG. */
const PNG = Uint8Array.fromBase64(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
);

/** The call's result when the host refused the worker's: a failure, not a dropped message. */
const REFUSED = { id: 7, type: "result", observation: MALFORMED_RESULT };

function result(image: { mediaType: string; data: string; sha256: string }): unknown {
  return {
    id: 7,
    type: "result",
    observation: { status: "SUCCEEDED", output: "an image", images: [image] },
  };
}

Deno.test("parseChildMessage() refuses a result image that is not base64 of its media type", async () => {
  const sha256 = await sha256Hex(PNG);
  const sound = { mediaType: "image/png", data: PNG.toBase64(), sha256 };
  deepEqual(parseChildMessage(result(sound)), {
    id: 7,
    type: "result",
    observation: { status: "SUCCEEDED", output: "an image", images: [sound] },
  });
  const malformed = [
    { ...sound, data: "not base64!!" },
    { ...sound, data: `${PNG.toBase64()}@` },
    // Bytes of another type, or of none, under an image's media type.
    { ...sound, mediaType: "image/jpeg" },
    { ...sound, data: new TextEncoder().encode("#!/bin/sh\nrm -rf ~\n").toBase64() },
    { ...sound, data: "" },
  ];
  for (const image of malformed) deepEqual(parseChildMessage(result(image)), REFUSED, image.data);
});

Deno.test("parseChildMessage() refuses a result image that is not a whole image within the limits", async () => {
  const view = (bytes: Uint8Array) => new DataView(bytes.buffer);
  const huge = PNG.slice();
  view(huge).setUint32(16, 100_000);
  view(huge).setUint32(20, 100_000);
  const zeroWide = PNG.slice();
  view(zeroWide).setUint32(16, 0);
  const broken = [
    // A header claiming 100000×100000 pixels, one of no width, one cut short, one without
    // image data, one with bytes after its end: each of them the type it says by magic number.
    huge,
    zeroWide,
    PNG.slice(0, PNG.length - 12),
    new Uint8Array([...PNG.slice(0, 33), ...PNG.slice(PNG.length - 12)]),
    new Uint8Array([...PNG, 0, 0, 0, 0]),
  ];
  for (const bytes of broken) {
    const image = {
      mediaType: "image/png",
      data: bytes.toBase64(),
      sha256: await sha256Hex(bytes),
    };
    deepEqual(parseChildMessage(result(image)), REFUSED, bytes.length.toString());
  }
});

Deno.test("parseChildMessage() refuses a result image whose base64 is not as tern writes it", async () => {
  const sha256 = await sha256Hex(PNG);
  // Each decodes to the PNG, but the data goes out as it is, and a provider may refuse it.
  for (const data of [PNG.toBase64().replace(/=+$/, ""), PNG.toBase64().replace("AAAA", "AA AA")]) {
    deepEqual(parseChildMessage(result({ mediaType: "image/png", data, sha256 })), REFUSED, data);
  }
});
