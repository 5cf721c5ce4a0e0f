/**
 * Small valid PDFs written by hand for tests: one page per text, each drawing its text with
 * Helvetica, with a correct cross-reference table; and a decompression bomb.
 */
import { constants as zlib, deflateRawSync } from "node:zlib";

/** A PDF with one page per entry of `pages`, each showing that text (ASCII, no parentheses). */
export function minimalPdf(pages: string[]): Uint8Array<ArrayBuffer> {
  const objects: string[] = [];
  const pageIds = pages.map((_, i) => 4 + i * 2);
  objects[1] = "<< /Type /Catalog /Pages 2 0 R >>";
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(" ")}] ` +
    `/Count ${pages.length} >>`;
  objects[3] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";
  pages.forEach((text, i) => {
    const stream = `BT /F1 18 Tf 72 720 Td (${text}) Tj ET`;
    objects[pageIds[i]] = "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] " +
      `/Resources << /Font << /F1 3 0 R >> >> /Contents ${pageIds[i] + 1} 0 R >>`;
    objects[pageIds[i] + 1] = `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`;
  });
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = out.length;
    out += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = out.length;
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++) {
    out += `${String(offsets[id]).padStart(10, "0")} 00000 n \n`;
  }
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(out);
}

/** Bytes of spaces one compressed block of {@linkcode bombPdf} holds. */
const BOMB_BLOCK = 16 * 1024 * 1024;

/**
 * A one-page PDF whose content stream (FlateDecode) inflates to `mebibytes` MiB (a multiple of
 * 16) of spaces from about a thousandth of that: a decompression bomb. One 16 MiB block is
 * compressed once, flushed whole so that its copies join into one valid zlib stream.
 */
export function bombPdf(mebibytes: number): Uint8Array<ArrayBuffer> {
  const copies = Math.ceil((mebibytes * 1024 * 1024) / BOMB_BLOCK);
  const block = deflateRawSync(new Uint8Array(BOMB_BLOCK).fill(0x20), {
    finishFlush: zlib.Z_FULL_FLUSH,
  });
  const length = BigInt(copies) * BigInt(BOMB_BLOCK);
  // Adler-32 of `length` spaces (0x20), computed without reading them.
  const a = (1n + 32n * length) % 65521n;
  const b = (length + 32n * length * (length + 1n) / 2n) % 65521n;
  const checksum = Number((b << 16n) | a);
  const data = [
    new Uint8Array([0x78, 0x9c]),
    ...Array.from({ length: copies }, () => block),
    // An empty final block (fixed codes), then the checksum.
    new Uint8Array([
      0x03,
      0x00,
      checksum >>> 24,
      (checksum >>> 16) & 255,
      (checksum >>> 8) & 255,
      checksum & 255,
    ]),
  ];
  const size = data.reduce((sum, part) => sum + part.length, 0);
  const encoder = new TextEncoder();
  const head = encoder.encode(
    "%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n" +
      "2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n" +
      "3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>\nendobj\n" +
      `4 0 obj\n<< /Length ${size} /Filter /FlateDecode >>\nstream\n`,
  );
  // No cross-reference table: pdf.js rebuilds it, as it does for many real files.
  const tail = encoder.encode("\nendstream\nendobj\ntrailer\n<< /Size 5 /Root 1 0 R >>\n%%EOF\n");
  const out = new Uint8Array(head.length + size + tail.length);
  let at = 0;
  for (const part of [head, ...data, tail]) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
