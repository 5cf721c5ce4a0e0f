/**
 * Raw terminal input (raw mode bytes) to `KeyEvent`s: UTF-8 split across reads, legacy control
 * bytes, CSI/SS3 sequences with xterm modifiers, the kitty keyboard protocol, xterm
 * modifyOtherKeys, bracketed paste and terminal replies. Unknown sequences are dropped, never
 * returned as text.
 */
import { type KeyEvent, textKey } from "./key_event.ts";

const ESC = "\x1b";
const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";
/** A CSI longer than this without a final byte is garbage, not a sequence still arriving. */
const MAX_CSI = 64;
/** Longest OSC or DCS reply kept while waiting for its terminator. */
const MAX_STRING_REPLY = 4096;

type Mods = { ctrl: boolean; alt: boolean; shift: boolean };
const NO_MODS: Mods = { ctrl: false, alt: false, shift: false };

/** One parsing step: the event (if any), where to continue, and whether a paste begins. */
type Step = { event?: KeyEvent; next: number; paste?: boolean };

/**
 * Stateful decoder: `feed()` every read, and call `flush()` when no input arrived for ~30 ms so
 * a lone Esc (which could start a sequence) is reported. A bracketed paste is held until its end
 * marker, however many reads it spans (flush does not cut it short). What follows a paste waits
 * for that pause too: pasted text that holds the end marker itself (a page or a file crafted to
 * end the paste early, in a terminal that passes the marker on) is followed, in the same burst,
 * by the terminal's own end marker, so everything up to the burst's last end marker is pasted
 * text, never keys (an Enter, a slash command).
 *
 * Decisions: `\r` is Enter; `\n` is Ctrl+J (`{name: "j", ctrl: true}`, which the editor treats
 * as "insert a newline"); 0x7f and 0x08 are Backspace; Esc followed by a key is that key with
 * alt; `CSI row;col R` is always a cursor report (so xterm's Shift+F3 `CSI 1;2R` is lost).
 */
export class KeyDecoder {
  #utf8 = new TextDecoder("utf-8");
  #pending = "";
  #paste: string | undefined;
  /** A paste ended: the input after it waits for a pause (see the class comment). */
  #afterPaste = false;

  /** Decodes `input` (bytes, or already decoded text) and returns the complete events in it. */
  feed(input: Uint8Array | string): KeyEvent[] {
    this.#pending += typeof input === "string" ? input : this.#utf8.decode(input, { stream: true });
    return this.#drain(false);
  }

  /**
   * Resolves what waits for more input although none came: a lone Esc becomes `escape`, and Esc
   * followed by only `[`, `O`, `]` or `P` becomes that key with Alt. A longer unfinished sequence
   * (cut by a slow link) keeps waiting for its end, and so does an unfinished paste.
   */
  flush(): KeyEvent[] {
    return this.#drain(true);
  }

  #drain(final: boolean): KeyEvent[] {
    const events: KeyEvent[] = [];
    const input = this.#pending;
    let i = 0;
    if (this.#afterPaste) {
      // Another paste at once (a paste key held down) is its own, and is held after in turn.
      if (input.startsWith(PASTE_START)) this.#afterPaste = false;
      else if (!final) return events;
      else {
        this.#afterPaste = false;
        const last = input.lastIndexOf(PASTE_END);
        if (last !== -1) {
          // The paste held an end marker: the terminal's own ends it, the keys between are text.
          events.push({ kind: "paste", text: normaliseNewlines(PASTE_END + input.slice(0, last)) });
          i = last + PASTE_END.length;
        }
      }
    }
    while (i < input.length) {
      if (this.#paste !== undefined) {
        const end = input.indexOf(PASTE_END, i);
        if (end === -1) {
          const keep = markerPrefixAtEnd(input, i, PASTE_END);
          this.#paste += input.slice(i, input.length - keep);
          i = input.length - keep;
          break;
        }
        events.push({ kind: "paste", text: normaliseNewlines(this.#paste + input.slice(i, end)) });
        this.#paste = undefined;
        i = end + PASTE_END.length;
        this.#afterPaste = true;
        break;
      }
      const step = parseOne(input, i, final);
      if (step === undefined) break;
      if (step.event !== undefined) events.push(step.event);
      if (step.paste) this.#paste = "";
      i = step.next;
    }
    this.#pending = input.slice(i);
    return events;
  }
}

/** How many characters at the end of `input` (from `from`) are a proper prefix of `marker`. */
function markerPrefixAtEnd(input: string, from: number, marker: string): number {
  for (let n = Math.min(marker.length - 1, input.length - from); n > 0; n--) {
    if (input.endsWith(marker.slice(0, n))) return n;
  }
  return 0;
}

function normaliseNewlines(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

function keyEvent(name: string, mods: Mods = NO_MODS): KeyEvent {
  return { kind: "key", name, ctrl: mods.ctrl, alt: mods.alt, shift: mods.shift };
}

function isPrintable(code: number): boolean {
  return code >= 0x20 && code !== 0x7f && (code < 0x80 || code > 0x9f);
}

/** Parses the event at `i`, or undefined when it may be the start of an unfinished sequence. */
function parseOne(input: string, i: number, final: boolean): Step | undefined {
  const code = input.charCodeAt(i);
  if (input[i] === ESC) return parseEscape(input, i, final);
  if (code < 0x20 || code === 0x7f) return { event: controlKey(code, false), next: i + 1 };
  if (code >= 0x80 && code <= 0x9f) return { next: i + 1 };
  let j = i + 1;
  while (j < input.length && isPrintable(input.charCodeAt(j))) j++;
  return { event: textKey(input.slice(i, j)), next: j };
}

/** A C0 control byte (or DEL) as a key; `alt` when it followed an Esc. */
function controlKey(code: number, alt: boolean): KeyEvent {
  const mods = { ctrl: false, alt, shift: false };
  if (code === 0x0d) return keyEvent("enter", mods);
  if (code === 0x09) return keyEvent("tab", mods);
  if (code === 0x7f || code === 0x08) return keyEvent("backspace", mods);
  if (code === 0x00) return keyEvent("space", { ...mods, ctrl: true });
  const char = String.fromCharCode(code ^ 0x40);
  return keyEvent(char.toLowerCase(), { ...mods, ctrl: true });
}

/** A printable character typed with Alt (Esc prefix): letters by lowercase name plus shift. */
function altChar(char: string): KeyEvent {
  if (char === " ") return keyEvent("space", { ctrl: false, alt: true, shift: false });
  const lower = char.toLowerCase();
  return keyEvent(lower, { ctrl: false, alt: true, shift: lower !== char });
}

function parseEscape(input: string, i: number, final: boolean): Step | undefined {
  if (i + 1 >= input.length) return final ? { event: keyEvent("escape"), next: i + 1 } : undefined;
  const next = input[i + 1];
  if (next === "[") return parseCsi(input, i, final);
  if (next === "O") return parseSs3(input, i, final);
  if (next === "]" || next === "P") {
    if (i + 2 >= input.length) {
      return final ? { event: altChar(next), next: i + 2 } : undefined;
    }
    const starts = next === "]" ? /[0-9]/ : /[>0-9!+$=|]/;
    if (starts.test(input[i + 2])) return parseStringReply(input, i);
  }
  if (next === ESC) {
    if (i + 2 >= input.length && !final) return undefined;
    const third = input[i + 2];
    if (third === "[" || third === "O") {
      const inner = parseEscape(input, i + 1, final);
      if (inner === undefined) return undefined;
      const event = inner.event?.kind === "key" ? { ...inner.event, alt: true } : inner.event;
      return { ...inner, event };
    }
    return { event: keyEvent("escape"), next: i + 1 };
  }
  const code = input.charCodeAt(i + 1);
  if (code < 0x20 || code === 0x7f) return { event: controlKey(code, true), next: i + 2 };
  const char = String.fromCodePoint(input.codePointAt(i + 1)!);
  return { event: altChar(char), next: i + 1 + char.length };
}

/** OSC (`ESC ] … BEL|ST`) and DCS (`ESC P … ST`) replies become `report` events. */
function parseStringReply(input: string, i: number): Step | undefined {
  for (let j = i + 2; j < input.length && j - i < MAX_STRING_REPLY; j++) {
    if (input[j] === "\x07") return { event: report(input.slice(i, j + 1)), next: j + 1 };
    if (input[j] === ESC && input[j + 1] === "\\") {
      return { event: report(input.slice(i, j + 2)), next: j + 2 };
    }
  }
  return input.length - i >= MAX_STRING_REPLY ? { next: input.length } : undefined;
}

function report(sequence: string): KeyEvent {
  return { kind: "report", sequence };
}

function parseSs3(input: string, i: number, final: boolean): Step | undefined {
  let j = i + 2;
  while (j < input.length && input[j] >= "0" && input[j] <= "9") j++;
  if (j >= input.length) return final && j === i + 2 ? { event: altChar("O"), next: j } : undefined;
  const digits = input.slice(i + 2, j);
  const mods = digits === "" ? NO_MODS : modifiers(Number(digits));
  const name = SS3_KEYS[input[j]];
  return { event: name && mods ? keyEvent(name, mods) : undefined, next: j + 1 };
}

/** Final letters of `CSI [1;mods] X` keys (R is left to cursor position reports). */
const LETTER_KEYS: Record<string, string> = {
  A: "up",
  B: "down",
  C: "right",
  D: "left",
  H: "home",
  F: "end",
  P: "f1",
  Q: "f2",
  S: "f4",
};

/** `SS3 X` keys: the same letters, plus keypad Enter and F3. */
const SS3_KEYS: Record<string, string> = { ...LETTER_KEYS, M: "enter", R: "f3" };

const TILDE_KEYS: Record<number, string> = {
  1: "home",
  2: "insert",
  3: "delete",
  4: "end",
  5: "pageup",
  6: "pagedown",
  7: "home",
  8: "end",
  11: "f1",
  12: "f2",
  13: "f3",
  14: "f4",
  15: "f5",
  17: "f6",
  18: "f7",
  19: "f8",
  20: "f9",
  21: "f10",
  23: "f11",
  24: "f12",
};

function parseCsi(input: string, i: number, final: boolean): Step | undefined {
  let j = i + 2;
  while (j < input.length && j - i <= MAX_CSI) {
    const code = input.charCodeAt(j);
    if (code >= 0x40 && code <= 0x7e) {
      const raw = input.slice(i, j + 1);
      if (raw === PASTE_START) return { next: j + 1, paste: true };
      return { event: decodeCsi(raw), next: j + 1 };
    }
    if (code < 0x20 || code > 0x3f) return { next: j };
    j++;
  }
  if (j - i > MAX_CSI) return { next: j };
  return final && j === i + 2 ? { event: altChar("["), next: j } : undefined;
}

/** xterm / kitty modifier parameter (1 + bits) to modifiers; undefined for super/hyper. */
function modifiers(value: number): Mods | undefined {
  const bits = Math.max(0, (Number.isFinite(value) ? value : 1) - 1);
  if (bits & (8 | 16)) return undefined;
  return { shift: (bits & 1) !== 0, alt: (bits & (2 | 32)) !== 0, ctrl: (bits & 4) !== 0 };
}

/** A complete CSI sequence to an event; undefined for what is not understood. */
function decodeCsi(raw: string): KeyEvent | undefined {
  const body = raw.slice(2, -1);
  const finalByte = raw[raw.length - 1];
  const prefix = /^[<=>?]/.test(body) ? body[0] : "";
  const intermediates = /[\x20-\x2f]*$/.exec(body)![0];
  const params = body.slice(prefix.length, body.length - intermediates.length);
  if (prefix === "?" && finalByte === "u") return report(raw);
  if (intermediates === "$" && finalByte === "y") return report(raw);
  if ((prefix === "?" || prefix === ">") && finalByte === "c") return report(raw);
  if (finalByte === "R" && /^\??\d+;\d+(;\d+)?$/.test(prefix + params)) return report(raw);
  if (prefix !== "" || intermediates !== "") return undefined;
  const fields = params.split(";").map((field) =>
    field.split(":").map((n) => (n === "" ? undefined : Number(n)))
  );
  const code = fields[0][0] ?? 1;
  if (fields[1]?.[1] === 3) return undefined;
  const mods = modifiers(fields[1]?.[0] ?? 1);
  if (mods === undefined) return undefined;
  if (finalByte === "u") return kittyKey(code, fields[0][1], mods, fields[2]);
  if (finalByte === "~") {
    const other = fields[2]?.[0];
    if (code === 27 && other !== undefined) return kittyKey(other, undefined, mods);
    const name = TILDE_KEYS[code];
    return name ? keyEvent(name, mods) : undefined;
  }
  if (finalByte === "Z") return keyEvent("tab", { ...mods, shift: true });
  const name = LETTER_KEYS[finalByte];
  return name ? keyEvent(name, mods) : undefined;
}

const KITTY_NAMED: Record<number, string> = {
  13: "enter",
  9: "tab",
  27: "escape",
  127: "backspace",
  8: "backspace",
  32: "space",
  57414: "enter",
};

/**
 * A kitty `CSI code[:shifted[:base]];mods[:event];text u` key (or modifyOtherKeys code).
 * Printable keys with no modifier but shift become text; with ctrl/alt they are named by their
 * lowercase character. Private-use codes (modifier keys, media keys) are dropped.
 */
function kittyKey(
  code: number,
  shifted: number | undefined,
  mods: Mods,
  textCodes?: Array<number | undefined>,
): KeyEvent | undefined {
  const named = KITTY_NAMED[code];
  if (named) return keyEvent(named, mods);
  if (!isCodePoint(code) || code < 0x20 || (code >= 0xe000 && code <= 0xf8ff)) return undefined;
  const char = String.fromCodePoint(code);
  if (!mods.ctrl && !mods.alt) {
    return textKey(typedText(char, shifted, mods.shift, textCodes));
  }
  const lower = char.toLowerCase();
  return keyEvent(lower, { ...mods, shift: mods.shift || lower !== char });
}

/** What a printable kitty key types: its text field, else its shifted form, else itself. */
function typedText(
  char: string,
  shifted: number | undefined,
  shift: boolean,
  textCodes?: Array<number | undefined>,
): string {
  if (textCodes && textCodes.every((n) => isCodePoint(n) && n >= 0x20)) {
    return String.fromCodePoint(...(textCodes as number[]));
  }
  if (!shift) return char;
  return isCodePoint(shifted) ? String.fromCodePoint(shifted) : char.toUpperCase();
}

function isCodePoint(n: number | undefined): n is number {
  return n !== undefined && Number.isInteger(n) && n >= 0 && n <= 0x10ffff;
}
