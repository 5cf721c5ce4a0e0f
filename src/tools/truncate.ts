/**
 * Caps text at `maxChars`, keeping the head and the tail and saying what was cut in between.
 * Text within the cap is returned unchanged. Neither cut parts a surrogate pair (an emoji).
 */
export function truncateMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const keep = Math.max(0, maxChars - 100);
  let headEnd = Math.ceil(keep * 0.6);
  if (isHigh(text.charCodeAt(headEnd - 1))) headEnd--;
  let tailStart = text.length - Math.floor(keep * 0.4);
  if (isHigh(text.charCodeAt(tailStart - 1))) tailStart++;
  const head = text.slice(0, headEnd);
  const tail = text.slice(tailStart);
  const cutChars = text.length - head.length - tail.length;
  const cutLines = countLines(text.slice(head.length, text.length - tail.length));
  return `${head}\n[... ${cutChars} characters (${cutLines} lines) cut ...]\n${tail}`;
}

/** The first half of a surrogate pair. */
function isHigh(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}
