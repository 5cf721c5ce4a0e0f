/** imageStructureProblem(): whole images of each type pass; cut or hollow ones are named. */
import { equal, match } from "node:assert/strict";
import { imageStructureProblem, sniffImageType } from "../../src/core/image_type.ts";

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
const WEBP = bytes("RIFF", [12, 0, 0, 0], "WEBP", "VP8L", [0, 0, 0, 0]);

Deno.test("imageStructureProblem() passes a whole PNG, JPEG, GIF and WebP", () => {
  for (const image of [PNG, JPEG, GIF, WEBP]) {
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
    [bytes([0xff, 0xd8, 0xff], " not a jpeg at all"), /broken segment|cut short/],
    [bytes([0xff, 0xd8], [0xff, 0xda, 0x00, 0x08, 1, 1, 0, 0, 0x3f, 0]), /scan before any frame/],
    [bytes("GIF89a", [0, 0, 1, 0, 0, 0, 0, 0]), /width or height of 0/],
    [bytes("RIFF", [200, 0, 0, 0], "WEBP", "VP8L", [0, 0, 0, 0]), /cut short \(its RIFF size\)/],
  ];
  for (const [image, why] of cases) {
    const type = sniffImageType(image);
    match(String(type && imageStructureProblem(image, type)), why, String(type));
  }
});
