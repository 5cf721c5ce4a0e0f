/**
 * imageStructureProblem(): whole images of each type pass; cut or hollow ones are named.
 * imageSize() and imagePart(): a header claiming a side over MAX_IMAGE_SIDE is refused.
 */
import { deepEqual, equal, match, rejects } from "node:assert/strict";
import {
  imageSize,
  imageStructureProblem,
  MAX_IMAGE_SIDE,
  sniffImageType,
} from "../../src/core/image_type.ts";
import { imagePart } from "../../src/core/image_part.ts";

function bytes(...parts: Array<string | number[]>): Uint8Array {
  return Uint8Array.from(
    parts.flatMap((part) =>
      typeof part === "string" ? [...part].map((c) => c.charCodeAt(0)) : part
    ),
  );
}

const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);
/** SOI, an APP0, a 1×1 baseline frame, a scan header, some data, EOI. */
const JPEG = bytes(
  [0xff, 0xd8],
  [0xff, 0xe0, 0x00, 0x10],
  "JFIF\0",
  [1, 1, 0, 0, 1, 0, 1, 0, 0],
  [0xff, 0xc0, 0x00, 0x0b, 8, 0, 1, 0, 1, 1, 1, 0x11, 0],
  [0xff, 0xda, 0x00, 0x08, 1, 1, 0, 0, 0x3f, 0],
  [0x12, 0x34],
  [0xff, 0xd9],
);
const GIF = bytes("GIF89a", [1, 0, 1, 0, 0, 0, 0], [
  0x2c,
  0,
  0,
  0,
  0,
  1,
  0,
  1,
  0,
  0,
  2,
  2,
  0x44,
  1,
  0,
  0x3b,
]);
/** Whole 1×1 WebP images: lossless (VP8L), lossy (VP8) and extended with alpha (VP8X). */
const WEBP = Uint8Array.fromBase64("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==");
const WEBP_LOSSY = Uint8Array.fromBase64(
  "UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA",
);
const WEBP_EXTENDED = Uint8Array.fromBase64(
  "UklGRkoAAABXRUJQVlA4WAoAAAAQAAAAAAAAAAAAQUxQSAwAAAARBxAR/Q9ERP8DAABWUDggGAAAABQBAJ0BKgEAAQAAAP4AAA3AAP7mtQAAAA==",
);

/** `image` with `values` written from byte `at` on. */
function patched(image: Uint8Array, at: number, values: number[]): Uint8Array {
  const copy = image.slice();
  copy.set(values, at);
  return copy;
}

Deno.test("imageStructureProblem() passes a whole PNG, JPEG, GIF and WebP", () => {
  // A JPEG with data after its end (cameras append some) is whole too.
  const trailing = Uint8Array.from([...JPEG, 1, 2, 0xd9, 3]);
  for (const image of [PNG, JPEG, trailing, GIF, WEBP, WEBP_LOSSY, WEBP_EXTENDED]) {
    const type = sniffImageType(image);
    equal(type !== undefined && imageStructureProblem(image, type), undefined, String(type));
  }
});

Deno.test("imageStructureProblem() names what is missing from a cut or hollow image", () => {
  const cases: Array<[Uint8Array, RegExp]> = [
    [PNG.subarray(0, 10), /no PNG header/],
    [PNG.subarray(0, PNG.length - 12), /cut short \(no IEND/],
    [
      Uint8Array.from([...PNG.subarray(0, 16), 0, 0, 0, 0, ...PNG.subarray(20)]),
      /width or height of 0/,
    ],
    [JPEG.subarray(0, 30), /cut short/],
    // Cut inside its scan: no end-of-image marker after it (one inside APP0 does not count).
    [JPEG.subarray(0, JPEG.length - 2), /cut short \(no end of image after its scan\)/],
    [patched(JPEG.subarray(0, JPEG.length - 2), 14, [0xff, 0xd9]), /no end of image/],
    [bytes([0xff, 0xd8, 0xff], " not a jpeg at all"), /broken segment|cut short/],
    [bytes([0xff, 0xd8], [0xff, 0xda, 0x00, 0x08, 1, 1, 0, 0, 0x3f, 0]), /scan before any frame/],
    [bytes("GIF89a", [0, 0, 1, 0, 0, 0, 0, 0]), /width or height of 0/],
    [bytes("RIFF", [200, 0, 0, 0], "WEBP", "VP8L", [0, 0, 0, 0]), /cut short \(its RIFF size\)/],
    // A WebP chunk with no frame header after it: no size to read.
    [bytes("RIFF", [12, 0, 0, 0], "WEBP", "VP8L", [0, 0, 0, 0]), /no WebP header/],
    // Hollow: a header and an end, nothing to show between them.
    [Uint8Array.from([...PNG.subarray(0, 33), ...PNG.subarray(-12)]), /no image data \(IDAT\)/],
    [Uint8Array.from([...PNG, 0]), /data after its end/],
    [patched(PNG, 33, [0x7f, 0, 0, 13]), /cut short \(a chunk's length\)/],
    [bytes("GIF89a", [1, 0, 1, 0, 0, 0, 0], [0x3b]), /no image in it/],
    [bytes("GIF89a", [1, 0, 1, 0, 0x80, 0, 0], [0, 0, 0]), /cut short \(no image/],
    [
      bytes("RIFF", [22, 0, 0, 0], "WEBP", "VP8X", [10, 0, 0, 0], [
        0x10,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
      ]),
      /no image in it/,
    ],
    // IHDR is 13 bytes; a PNG whose first chunk says otherwise is refused by providers.
    [patched(PNG, 8, [0, 0, 0, 12]), /no PNG header/],
  ];
  for (const [image, why] of cases) {
    const type = sniffImageType(image);
    match(String(type && imageStructureProblem(image, type)), why, String(type));
  }
});

Deno.test("imageSize() reads the width and height each format's header claims", () => {
  const cases: Array<[Uint8Array, number, number]> = [
    [PNG, 1, 1],
    [JPEG, 1, 1],
    [GIF, 1, 1],
    [WEBP, 1, 1],
    [WEBP_LOSSY, 1, 1],
    [WEBP_EXTENDED, 1, 1],
    [patched(PNG, 16, [0, 0, 0x0b, 0xb8, 0, 0, 0, 2]), 3000, 2],
    [patched(JPEG, 25, [0x01, 0x2c, 0x00, 0xc8]), 200, 300],
    [patched(GIF, 6, [0x40, 0x1f, 5, 0]), 8000, 5],
    [patched(WEBP, 21, [0x63, 0xc0, 0x09, 0]), 100, 40],
    [patched(WEBP_LOSSY, 26, [0x40, 0x1f, 7, 0]), 8000, 7],
    [patched(WEBP_EXTENDED, 24, [0xff, 0xff, 0xff, 9, 0, 0]), 1 << 24, 10],
  ];
  for (const [image, width, height] of cases) {
    const type = sniffImageType(image)!;
    deepEqual(imageSize(image, type), { width, height }, type);
  }
});

Deno.test("imagePart() refuses a header claiming a side over MAX_IMAGE_SIDE, of every format", async () => {
  const bombs: Array<[Uint8Array, string]> = [
    // 100,000 × 100,000 from a 70-byte PNG: a decompression bomb's shape.
    [patched(PNG, 16, [0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0]), "100000×100000"],
    [patched(JPEG, 25, [0xff, 0xff, 0x00, 0x01]), "1×65535"],
    [patched(GIF, 6, [0x41, 0x1f, 1, 0]), "8001×1"],
    [patched(WEBP, 21, [0xff, 0xff, 0xff, 0x0f]), "16384×16384"],
    [patched(WEBP_LOSSY, 26, [0x41, 0x1f, 1, 0]), "8001×1"],
    [patched(WEBP_EXTENDED, 24, [0, 0, 0, 0xff, 0xff, 0xff]), "1×16777216"],
  ];
  for (const [image, size] of bombs) {
    const type = sniffImageType(image)!;
    equal(imageStructureProblem(image, type), undefined, type);
    await rejects(imagePart(image, "bomb"), (error: Error) => {
      equal(
        error.message,
        `Cannot attach image "bomb": ${size} pixels is over the ${MAX_IMAGE_SIDE}-pixel limit ` +
          "of a side; make it smaller first (tern does not downscale)",
      );
      return true;
    });
  }
  // The limit itself is taken.
  await imagePart(patched(GIF, 6, [0x40, 0x1f, 0x40, 0x1f]), "edge.gif");
});
