/**
 * A tool worker's result may carry images (read of an image file); the host takes one only when
 * its data is base64 of an image of the media type it names, as it refuses any other malformed
 * message from the worker.
 */
import { deepEqual, equal } from "node:assert/strict";
import { sha256Hex } from "../../src/core/image_part.ts";
import { parseChildMessage } from "../../src/sandbox/worker/protocol.ts";

/** A 1×1 PNG. */
const PNG = Uint8Array.fromBase64(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
);

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
  for (const image of malformed) equal(parseChildMessage(result(image)), null, image.data);
});
