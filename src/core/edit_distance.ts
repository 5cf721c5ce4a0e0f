/**
 * The edits (a letter added, dropped or changed, or two neighbours swapped) that turn `a` into
 * `b`: what a mistyped name's suggestion (`did you mean …?`) is measured by. Quadratic: for
 * short names only.
 */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
      }
    }
  }
  return rows[a.length][b.length];
}

/**
 * The candidate nearest to `word` (case ignored) that is fewer than `below` edits away, or
 * undefined. Of candidates equally near, one of the same length wins, then one of the same
 * letters in another order: `modle` is `model` swapped, not `mode` with a letter more. Else the
 * first in `candidates`. A candidate whose length differs by `below` or more is never measured,
 * so a very long word costs nothing.
 */
export function closestName(
  word: string,
  candidates: Iterable<string>,
  below: number,
): string | undefined {
  const typed = word.toLowerCase();
  let letters: string | undefined;
  let best: { name: string; rank: number[] } | undefined;
  for (const name of candidates) {
    const lower = name.toLowerCase();
    const lengthGap = Math.abs(lower.length - typed.length);
    if (lengthGap >= below) continue;
    const distance = editDistance(typed, lower);
    if (distance >= below) continue;
    letters ??= sortedLetters(typed);
    const rank = [distance, lengthGap, sortedLetters(lower) === letters ? 0 : 1];
    if (best === undefined || isLower(rank, best.rank)) best = { name, rank };
  }
  return best?.name;
}

function sortedLetters(text: string): string {
  return [...text].sort().join("");
}

/** Whether `a` sorts before `b`, comparing element by element. */
function isLower(a: number[], b: number[]): boolean {
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) return a[i] < b[i];
  }
  return false;
}
