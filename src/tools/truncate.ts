import { cutBack, cutForward } from "../core/code_points.ts";

/**
 * Caps text at `maxChars`, keeping the head and the tail and saying what was cut in between.
 * Text within the cap is returned unchanged. Neither cut parts a surrogate pair (an emoji).
 */
export function truncateMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const keep = Math.max(0, maxChars - 100);
  const headEnd = cutBack(text, Math.ceil(keep * 0.6));
  const tailStart = cutForward(text, text.length - Math.floor(keep * 0.4));
  const head = text.slice(0, headEnd);
  const tail = text.slice(tailStart);
  const cutChars = text.length - head.length - tail.length;
  const cutLines = countLines(text.slice(head.length, text.length - tail.length));
  return `${head}\n[... ${cutChars} characters (${cutLines} lines) cut ...]\n${tail}`;
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}
