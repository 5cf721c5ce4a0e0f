/**
 * Issue 30, part 5, in the real `tern` in tmux: after the window narrows or widens, the
 * committed blocks still on the visible screen are drawn again at the new width (no word cut
 * across rows), and what the shell printed before tern started stays in the scrollback.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { send, withTern } from "../support/tmux_run.ts";
import type { TmuxTern } from "../support/tmux.ts";
import { testWith, tmuxNeed } from "../support/needs.ts";

const MARKER = "SHELL-MARKER-BEFORE-TERN";
const WORDS = [
  "incomprehensibilities",
  "counterrevolutionaries",
  "electroencephalograph",
  "uncharacteristically",
  "misinterpretations",
  "photosynthesizing",
  "thermodynamically",
  "disproportionately",
  "overcompensating",
  "unquestionably",
  "kaleidoscopically",
  "bureaucratization",
];
/** Four paragraphs of long words: each takes 3 rows at 100 columns and 5 at 50. */
const PARAGRAPHS = Array.from(
  { length: 4 },
  (_, p) => Array.from({ length: 12 }, (_, i) => WORDS[(i + p * 5) % WORDS.length]).join(" "),
);
const ANSWER = PARAGRAPHS.join("\n\n");
const LAST = PARAGRAPHS.at(-1)!;

/** Lines of the capture, trailing blanks gone. */
const rows = (screen: string) => screen.split("\n").map((line) => line.trimEnd());

/** Pieces of an answer word on the screen (a word cut across rows), longer than 5 letters. */
function fragments(screen: string): string[] {
  return (screen.match(/[a-z]{6,}/g) ?? []).filter((token) =>
    !WORDS.includes(token) && WORDS.some((word) => word.includes(token))
  );
}

/** The visible rows joined by single spaces. */
const joined = (screen: string) => rows(screen).join(" ").replace(/\s+/g, " ");

/** Waits until the visible screen shows the last paragraph whole, no word cut, within `columns`. */
async function waitForRewrap(
  tern: TmuxTern,
  columns: number,
  also: (screen: string) => boolean = () => true,
): Promise<string> {
  return await tern.waitFor(
    (screen) =>
      fragments(screen).length === 0 && joined(screen).includes(LAST) &&
      rows(screen).every((line) => line.length <= columns) && also(screen),
    `the answer re-wrapped at ${columns} columns`,
    { scrollback: false },
  );
}

/** The turn is over: its footer is on screen (Ctrl-L waits for the end of a turn). */
const turnEnded = (screen: string) => rows(screen).some((line) => line.startsWith("─ 1 round"));

/**
 * The whole history shows the shell's marker once, above the session, and the question
 * `asked` times (twice once Ctrl-L replayed the transcript).
 */
async function checkMarker(tern: TmuxTern, asked = 1): Promise<void> {
  const history = rows(await tern.screen({ history: true }));
  equal(history.filter((line) => line === MARKER).length, 1, history.join("\n"));
  const questions = history.filter((line) => line === "› tell me a lot").length;
  equal(questions, asked, history.join("\n"));
  ok(history.indexOf("› tell me a lot") > history.indexOf(MARKER), history.join("\n"));
}

testWith(
  [tmuxNeed],
  "tern interactive re-wraps the visible answer at word boundaries after the window narrows",
  async () => {
    await withTern(
      [{ text: ANSWER }],
      { columns: 100, rows: 30, before: `echo ${MARKER}` },
      async ({ tern }) => {
        await send(tern, "tell me a lot");
        await waitForRewrap(tern, 100, turnEnded);
        await tern.resize(50, 30);
        // tmux alone re-flows the rows mid-word: only a redraw shows whole words.
        await waitForRewrap(tern, 50);
        await checkMarker(tern);
      },
    );
  },
);

testWith(
  [tmuxNeed],
  "tern interactive re-wraps the visible answer to the full width after the window widens",
  async () => {
    await withTern(
      [{ text: ANSWER }],
      { columns: 50, rows: 30, before: `echo ${MARKER}` },
      async ({ tern }) => {
        await send(tern, "tell me a lot");
        await waitForRewrap(tern, 50, turnEnded);
        await tern.resize(100, 30);
        // Rows wider than 50 columns made of answer words: drawn again at 100 columns.
        const wide = await waitForRewrap(
          tern,
          100,
          (screen) =>
            rows(screen).some((line) =>
              line.length > 60 && line.split(" ").every((word) => WORDS.includes(word))
            ),
        );
        ok(joined(wide).includes(LAST));
        await checkMarker(tern);
      },
    );
  },
);

testWith(
  [tmuxNeed],
  "tern interactive re-wraps the transcript Ctrl-L replayed after the window narrows",
  async () => {
    await withTern(
      [{ text: ANSWER }],
      { columns: 100, rows: 30, before: `echo ${MARKER}` },
      async ({ tern }) => {
        await send(tern, "tell me a lot");
        await waitForRewrap(tern, 100, turnEnded);
        await tern.keys("C-l");
        await tern.waitFor(
          (screen) => rows(screen).filter((line) => line === "› tell me a lot").length === 2,
          "the transcript replayed below the old one",
          { scrollback: true },
        );
        await tern.resize(50, 30);
        await waitForRewrap(tern, 50);
        await checkMarker(tern, 2);
      },
    );
  },
);

testWith(
  [tmuxNeed],
  "tern interactive re-wraps the visible answer while a turn runs, then goes on below it",
  async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let replies = 0;
    await withTern(
      [{ text: ANSWER }, { text: "Second answer done." }],
      {
        columns: 100,
        rows: 30,
        before: `echo ${MARKER}`,
        // The second model call waits until the test lets it go: the turn runs meanwhile.
        server: { beforeReply: () => ++replies === 2 ? held : Promise.resolve() },
      },
      async ({ tern }) => {
        await send(tern, "tell me a lot");
        await waitForRewrap(tern, 100, turnEnded);
        await send(tern, "and more");
        await tern.waitFor((screen) => screen.includes("Esc to stop"), "the second turn running");
        await tern.resize(50, 30);
        await waitForRewrap(tern, 50, (screen) => screen.includes("› and more"));
        release();
        const done = await tern.waitFor(
          (screen) => screen.includes("Second answer done.") && !screen.includes("Esc to stop"),
          "the second answer",
          { scrollback: false },
        );
        deepEqual(fragments(done), [], done);
        const shown = rows(done);
        ok(shown.indexOf("Second answer done.") > shown.indexOf("› and more"), done);
        await checkMarker(tern);
      },
    );
  },
);
