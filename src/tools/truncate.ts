/**
 * Caps text at `maxChars`, keeping the head and the tail and saying what was cut in between.
 * Text within the cap is returned unchanged.
 */
export function truncateMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const keep = Math.max(0, maxChars - 100);
  const head = text.slice(0, Math.ceil(keep * 0.6));
  const tail = text.slice(text.length - Math.floor(keep * 0.4));
  const cutChars = text.length - head.length - tail.length;
  const cutLines = countLines(text.slice(head.length, text.length - tail.length));
  return `${head}\n[... ${cutChars} characters (${cutLines} lines) cut ...]\n${tail}`;
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}
