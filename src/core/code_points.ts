/**
 * Cuts of UTF-16 text that never part a surrogate pair (an emoji, most CJK extensions). Half of
 * a pair left alone is a lone surrogate: model APIs reject a request that carries one, in every
 * turn after, and a terminal draws it as a replacement character.
 */

/** Whether a well-formed surrogate pair starts at `index` of `text`. */
export function pairStartsAt(text: string, index: number): boolean {
  return (text.charCodeAt(index) & 0xfc00) === 0xd800 &&
    (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00;
}

/** `at`, or one less when a cut at `at` would part a surrogate pair: for the end of a head. */
export function cutBack(text: string, at: number): number {
  return at > 0 && pairStartsAt(text, at - 1) ? at - 1 : at;
}

/** `at`, or one more when a cut at `at` would part a surrogate pair: for the start of a tail. */
export function cutForward(text: string, at: number): number {
  return at > 0 && pairStartsAt(text, at - 1) ? at + 1 : at;
}

/** The characters of `text`: a well-formed surrogate pair counts once, a lone surrogate once. */
export function codePointCount(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    if (pairStartsAt(text, i)) {
      count--;
      i++;
    }
  }
  return count;
}
