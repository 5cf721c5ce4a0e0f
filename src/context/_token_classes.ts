/**
 * One pass over a text that counts what the token estimator weighs (see tokens.ts). The counts
 * follow how o200k_base splits text before its byte-pair merges ("pre-tokens"): a letter run
 * (split where a lower-case letter meets an upper-case one) with at most one leading space or
 * punctuation character, digit runs in groups of up to three, punctuation runs with an optional
 * leading space and the line breaks after them, line-break runs, and space runs.
 */

/** Counts for one text, all whole numbers; `countTokenClasses()` returns the keys in this order. */
export interface TokenClassCounts {
  /** Letter runs (`parseUrl` is two, `HTTPServer` one), ASCII or other alphabets. */
  words: number;
  /** Letters past the eighth in a run: long or rare words take several tokens. */
  longWordChars: number;
  /** Letters after the first in runs with no vowel yet (`dpkg`, `rwxr`): abbreviations split. */
  consonantChars: number;
  /** Runs of two or more capitals followed by lower-case letters (`HTTPServer`, `FAPmx`). */
  mixedWords: number;
  /** Letters past the third in runs that start with punctuation (`.forEach`, `/python`). */
  punctWordChars: number;
  /** Digit runs counted in groups of up to three digits (`12345` is two). */
  digitGroups: number;
  /** Runs of punctuation and symbols, but for a single character that starts a letter run. */
  punctRuns: number;
  /** Punctuation characters past the second in a run (`](#`, `());`), but for the two below. */
  punctLongChars: number;
  /** JSON's `"{}[]:,` past the second in a run (`":{"`, `"},"`): common runs, often one token. */
  jsonPunctChars: number;
  /** Punctuation characters past the second in a run that repeat the one before (`=====`). */
  repeatChars: number;
  /** Whitespace pre-tokens: indentation, column alignment, a space before a digit. */
  spaceRuns: number;
  /** Runs of line breaks (with any blank space between them), except right after punctuation. */
  newlines: number;
  /** Spaces, tabs and line breaks past the sixteenth in a row: long blank runs still cost. */
  blankChars: number;
  /** CJK ideographs (Han). */
  han: number;
  /** Hiragana and katakana. */
  kana: number;
  /** Hangul syllables and jamo. */
  hangul: number;
  /** Runs of CJK letters: a run's first letter never merges with what precedes it. */
  cjkRuns: number;
  /** CJK and full-width punctuation (`。`, `、`, `「`, `（`); also counted in `punctRuns`. */
  cjkPunct: number;
  /** Letter runs with an accented Latin letter: a sign of a language other than English. */
  latinWords: number;
  /** Letters outside Latin and CJK (Greek, Cyrillic, ...). */
  otherLetters: number;
  /** Other non-ASCII characters (symbols, emoji), but for repeats (`───`); a pair counts once. */
  otherSymbols: number;
}

// Classes of a code unit. Non-ASCII letters count as LOWER, non-ASCII symbols as PUNCT.
const LOWER = 1;
const UPPER = 2;
const DIGIT = 3;
const SPACE = 4;
const NEWLINE = 5;
const PUNCT = 6;
const CJK = 7;

/** Class of each ASCII code unit. */
const ASCII = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  if (c >= 97 && c <= 122) ASCII[c] = LOWER;
  else if (c >= 65 && c <= 90) ASCII[c] = UPPER;
  else if (c >= 48 && c <= 57) ASCII[c] = DIGIT;
  else if (c === 10 || c === 13) ASCII[c] = NEWLINE;
  else if (c === 32 || c === 9 || c === 11 || c === 12) ASCII[c] = SPACE;
  else ASCII[c] = PUNCT;
}

/** 1 for the characters of JSON's structure: `"{}[]:,`. */
const JSON_PUNCT = new Uint8Array(128);
for (const c of '"{}[]:,') JSON_PUNCT[c.charCodeAt(0)] = 1;

/** 1 for the ASCII vowels, y included (non-ASCII letters count as vowels). */
const VOWEL = new Uint8Array(128);
for (const c of "aeiouyAEIOUY") VOWEL[c.charCodeAt(0)] = 1;

// More classes of non-ASCII code units, as `wideClass()` returns them.
const OTHER_LETTER = 8;
const LATIN_LETTER = 9;
const CJK_PUNCT = 10;
const SYMBOL = 11;
const LOW_SURROGATE = 12;

/** Counts what the token estimator weighs, in one pass over `text`. Never throws. */
export function countTokenClasses(text: string): TokenClassCounts {
  let words = 0, longWordChars = 0, consonantChars = 0, mixedWords = 0, punctWordChars = 0;
  let digitGroups = 0, punctRuns = 0, punctLongChars = 0, jsonPunctChars = 0, repeatChars = 0;
  let spaceRuns = 0, newlines = 0, blankChars = 0;
  let han = 0, kana = 0, hangul = 0, cjkRuns = 0, cjkPunct = 0;
  let latinWords = 0, otherLetters = 0, otherSymbols = 0;
  let prev = 0; // class of the character before position i; 0 at the start
  let run = 0; // length of the current letter, digit, space or punctuation run
  let caps = 0; // capitals after the first one in the current letter run
  let consonants = 0; // consonantChars of the current letter run, -1 once it has a vowel
  let attached = false; // the current letter run starts with a punctuation character
  let latin = false; // the current letter run has an accented Latin letter
  let attachNext = false; // the punctuation character before i starts a letter run
  let spaceAfterNewline = false; // the current space run follows a line break
  let lineBreaks = 0; // 1 in a counted run of line breaks, 2 in one that follows punctuation
  let blank = 0; // spaces, tabs and line breaks in a row
  const length = text.length;
  let i = 0;
  // Each branch takes the rest of its run in a tight loop of ASCII characters and leaves
  // anything else to the next turn of the outer loop, which goes on with the run if it can.
  while (i < length) {
    let c = text.charCodeAt(i);
    let k = c < 128 ? ASCII[c] : wideClass(c);
    let isLatin = false;
    if (k >= OTHER_LETTER) {
      if (k === LOW_SURROGATE) {
        i++;
        continue;
      } else if (k === LATIN_LETTER) {
        isLatin = true;
        k = LOWER;
      } else if (k === OTHER_LETTER) {
        otherLetters++;
        k = LOWER;
      } else if (k === CJK_PUNCT) {
        cjkPunct++;
        k = PUNCT;
      } else {
        if (c !== text.charCodeAt(i - 1)) otherSymbols++;
        k = PUNCT;
      }
    }
    if (prev === SPACE && k !== SPACE) {
      // o200k_base keeps one space for a following word or punctuation, none for a digit
      if (k === DIGIT) spaceRuns += run > 1 ? 2 : 1;
      else if (k !== NEWLINE && run > 1) spaceRuns++;
    }
    if (k === LOWER || k === UPPER) {
      for (;;) {
        if ((prev !== LOWER && prev !== UPPER) || (k === UPPER && prev === LOWER)) {
          words++;
          run = 1;
          caps = 0;
          consonants = c >= 128 || VOWEL[c] ? -1 : 0;
          attached = prev === PUNCT && attachNext;
          latin = false;
        } else {
          if (++run > 8) longWordChars++;
          if (consonants >= 0) {
            if (c >= 128 || VOWEL[c]) {
              consonantChars -= consonants;
              consonants = -1;
            } else {
              consonantChars++;
              consonants++;
            }
          }
          if (run > 3 && attached) punctWordChars++;
          if (k === UPPER) {
            if (prev === UPPER) caps++;
          } else if (caps !== 0 && prev === UPPER) mixedWords++;
        }
        if (isLatin && !latin) {
          latinWords++;
          latin = true;
        }
        prev = k;
        if (k === LOWER || caps === 0) {
          // the common case, lower-case letters going on with the run, in a tighter loop
          while (++i < length && (c = text.charCodeAt(i)) >= 97 && c <= 122) {
            if (++run > 8) longWordChars++;
            if (consonants >= 0) {
              if (VOWEL[c]) {
                consonantChars -= consonants;
                consonants = -1;
              } else {
                consonantChars++;
                consonants++;
              }
            }
            if (run > 3 && attached) punctWordChars++;
            prev = LOWER;
          }
        } else if (++i < length) c = text.charCodeAt(i);
        if (i === length || c >= 128) break;
        k = ASCII[c];
        if (k !== LOWER && k !== UPPER) break;
        isLatin = false;
      }
    } else if (k === SPACE) {
      if (prev !== SPACE) {
        run = 0;
        spaceAfterNewline = prev === NEWLINE;
        if (prev !== NEWLINE) blank = 0;
      }
      do {
        run++;
        if (++blank > 16) blankChars++;
      } while (++i < length && (c = text.charCodeAt(i)) < 128 && ASCII[c] === SPACE);
      if (i === length) spaceRuns++; // trailing blanks are a pre-token of their own
      prev = SPACE;
    } else if (k === DIGIT) {
      if (prev !== DIGIT) run = 0;
      do {
        if (run++ % 3 === 0) digitGroups++;
      } while (++i < length && (c = text.charCodeAt(i)) >= 48 && c <= 57);
      prev = DIGIT;
    } else if (k === PUNCT) {
      for (;;) {
        if (prev !== PUNCT) {
          attachNext = prev !== SPACE && i + 1 < length && startsWord(text.charCodeAt(i + 1));
          if (!attachNext) punctRuns++;
          run = 1;
        } else if (++run > 2) {
          if (c === text.charCodeAt(i - 1)) repeatChars++;
          else if (c < 128 && JSON_PUNCT[c]) jsonPunctChars++;
          else punctLongChars++;
        }
        prev = PUNCT;
        if (++i === length || (c = text.charCodeAt(i)) >= 128 || ASCII[c] !== PUNCT) break;
      }
    } else if (k === NEWLINE) {
      if (prev !== SPACE && prev !== NEWLINE) blank = 0;
      if (++blank > 16) blankChars++;
      i++;
      if (c === 13 && i < length && text.charCodeAt(i) === 10) continue;
      if (prev === PUNCT || (prev === NEWLINE && lineBreaks === 2)) lineBreaks = 2;
      else if (prev === NEWLINE || (prev === SPACE && spaceAfterNewline && lineBreaks === 1)) {
        // the same run of line breaks
      } else {
        newlines++;
        lineBreaks = 1;
      }
      prev = NEWLINE;
    } else {
      if (prev !== CJK) cjkRuns++;
      if (c >= 0x3040 && c <= 0x30ff) kana++;
      else if (c >= 0x4e00 && c <= 0x9fff) han++;
      else if (c < 0x3400 || (c >= 0xac00 && c <= 0xd7af)) hangul++;
      else han++;
      prev = CJK;
      i++;
    }
  }
  return {
    words,
    longWordChars,
    consonantChars,
    mixedWords,
    punctWordChars,
    digitGroups,
    punctRuns,
    punctLongChars,
    jsonPunctChars,
    repeatChars,
    spaceRuns,
    newlines,
    blankChars,
    han,
    kana,
    hangul,
    cjkRuns,
    cjkPunct,
    latinWords,
    otherLetters,
    otherSymbols,
  };
}

/** Whether code unit `c` is a letter, which a single punctuation character before it joins. */
function startsWord(c: number): boolean {
  if (c < 128) return ASCII[c] === LOWER || ASCII[c] === UPPER;
  const k = wideClass(c);
  return k === OTHER_LETTER || k === LATIN_LETTER || k === CJK;
}

/** Class of a non-ASCII code unit. */
function wideClass(c: number): number {
  if (c >= 0x4e00 && c <= 0x9fff) return CJK;
  if (c >= 0x3040 && c <= 0x30ff) return CJK;
  if (c >= 0xac00 && c <= 0xd7af) return CJK;
  if ((c >= 0x3000 && c <= 0x303f) || (c >= 0xff00 && c <= 0xffef)) return CJK_PUNCT;
  if ((c >= 0x3400 && c <= 0x4dbf) || (c >= 0xf900 && c <= 0xfaff)) return CJK;
  if ((c >= 0x1100 && c <= 0x11ff) || (c >= 0x3130 && c <= 0x318f)) return CJK;
  if (c >= 0xdc00 && c <= 0xdfff) return LOW_SURROGATE;
  if (c >= 0xd840 && c <= 0xd87f) return CJK; // the high half of CJK extension B and later
  if ((c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7) || (c >= 0x1e00 && c <= 0x1eff)) {
    return LATIN_LETTER;
  }
  if ((c >= 0x370 && c <= 0x52f) || (c >= 0x1f00 && c <= 0x1fff)) return OTHER_LETTER;
  return SYMBOL;
}
