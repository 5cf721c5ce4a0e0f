import assert from "node:assert/strict";
import { Screen } from "../../src/tui/screen.ts";
import { CommittedTail } from "../../src/tui/screen_tail.ts";
import { wrapText } from "../../src/tui/width.ts";
import { VtScreen } from "../support/vt_screen.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";

await loadRenderers();

const PARAGRAPH = "incomprehensibilities counterrevolutionaries electroencephalograph " +
  "uncharacteristically misinterpretations photosynthesizing thermodynamically";
const WORDS = new Set(PARAGRAPH.split(" "));
/** A block that renders the paragraph word-wrapped at any width. */
const paragraph = (tag: string) => (columns: number) =>
  wrapText(`${tag} ${PARAGRAPH}`, columns).map((row) => row.trimEnd());

/** A Screen on a VtScreen whose first rows hold what the shell printed before the session. */
function setup(columns: number, rows: number, shell: string[] = []) {
  const vt = new VtScreen(columns, rows);
  for (const line of shell) vt.write(line + "\r\n");
  const writes: string[] = [];
  const screen = new Screen({
    write(text: string) {
      writes.push(text);
      vt.write(text);
    },
  }, { columns, rows });
  return { vt, writes, screen };
}

/** The row of a cursor position reply, `ESC [ row ; col R`. */
function replyRow(reply: string): number {
  assert.ok(reply.startsWith("\x1b[") && reply.endsWith("R"), JSON.stringify(reply));
  return Number(reply.slice(2, -1).split(";")[0]);
}

/** Resizes the terminal and the screen, asks for the position and feeds the reply back. */
function resize(s: ReturnType<typeof setup>, columns: number, rows: number): boolean {
  const { vt, screen } = s;
  vt.resize(columns, rows);
  screen.resize({ columns, rows });
  screen.askPosition();
  const reply = vt.replies.pop();
  assert.ok(reply, "the screen asked for the cursor position");
  return screen.position(replyRow(reply));
}

/** Pieces of the paragraph's words on the rows (a word cut across rows). */
function cutWords(rows: string[]): string[] {
  return rows.flatMap((row) => row.split(" ")).filter((word) =>
    word !== "" && !WORDS.has(word) && [...WORDS].some((whole) => whole.includes(word))
  );
}

Deno.test("Screen.position() draws the committed blocks on screen again at the new width", () => {
  const s = setup(80, 14, ["$ echo marker", "marker"]);
  s.screen.render(["> ", "status"], { row: 0, col: 2 });
  for (const tag of ["first", "second"]) {
    const render = paragraph(tag);
    s.screen.commit(render(80), { lines: ["> ", "status"], cursor: { row: 0, col: 2 } }, [render]);
  }
  assert.ok(resize(s, 30, 14));
  const rows = s.vt.text();
  assert.deepEqual(cutWords(rows), [], rows.join("\n"));
  const second = rows.findIndex((row) => row.startsWith("second "));
  assert.deepEqual(rows.slice(second, -2), paragraph("second")(30));
  assert.deepEqual(rows.slice(-2), [">", "status"]);
  assert.deepEqual(s.vt.cursor, { row: 12, col: 2 });
  // What the shell printed stays, once, above the session.
  assert.equal(rows.filter((row) => row === "marker").length, 1);
  assert.ok(rows.indexOf("marker") < rows.findIndex((row) => row.startsWith("first ")));
});

Deno.test("Screen.position() never erases rows above the session or with a screen erase", () => {
  const s = setup(80, 24, ["$ echo marker", "marker", "$ tern"]);
  s.screen.render(["> ", "status"], { row: 0, col: 2 });
  const render = paragraph("only");
  s.screen.commit(render(80), { lines: ["> ", "status"], cursor: { row: 0, col: 2 } }, [render]);
  assert.ok(resize(s, 40, 24));
  // The whole session fits on screen: the shell's rows stay as they were, on screen.
  assert.deepEqual(s.vt.visible().slice(0, 3), ["$ echo marker", "marker", "$ tern"]);
  assert.deepEqual(s.vt.visible().slice(3).filter((row) => row !== ""), [
    ...render(40),
    ">",
    "status",
  ]);
  // Rows are blanked one by one: no erase below (tmux copies the screen into its history when
  // it starts on the top row), none of the screen (CSI 2J) or of the scrollback (CSI 3J).
  const redraw = s.writes.at(-1)!;
  assert.ok(redraw.includes(render(40)[0]), "the last write is the redraw");
  for (const erase of ["\x1b[J", "\x1b[0J", "\x1b[2J", "\x1b[3J"]) {
    assert.ok(!redraw.includes(erase), JSON.stringify(redraw));
  }
});

Deno.test("Screen.position() leaves blocks that scrolled into the scrollback as they were", () => {
  const s = setup(60, 10);
  s.screen.render(["status"]);
  const old: string[] = [];
  for (let i = 0; i < 12; i++) {
    const render = paragraph(`b${i}`);
    if (i < 4) old.push(...render(60));
    s.screen.commit(render(60), { lines: ["status"] }, [render]);
  }
  assert.ok(resize(s, 30, 10));
  const history = s.vt.scrollback();
  // The oldest blocks are in the scrollback as the terminal re-flowed them, never drawn again.
  assert.equal(
    history.join("").replaceAll(" ", "").startsWith(old.join("").replaceAll(" ", "")),
    true,
  );
  assert.deepEqual(cutWords(s.vt.visible()), [], s.vt.visible().join("\n"));
  assert.equal(s.vt.visible().filter((row) => row !== "").at(-1), "status");
});

Deno.test("Screen.position() ignores a reply that came after the live region moved", () => {
  const s = setup(60, 10);
  s.screen.render(["status"]);
  const render = paragraph("a");
  s.screen.commit(render(60), { lines: ["status"] }, [render]);
  s.vt.resize(30, 10);
  s.screen.resize({ columns: 30, rows: 10 });
  s.screen.askPosition();
  s.screen.commit(["later"], { lines: ["status"] });
  const before = s.writes.length;
  assert.equal(s.screen.position(replyRow(s.vt.replies.pop()!)), false);
  assert.equal(s.writes.length, before, "nothing drawn on a stale reply");
  assert.equal(s.screen.position(3), true, "an unasked reply is ignored");
  assert.equal(s.writes.length, before);
});

Deno.test("CommittedTail.rows() counts re-flowed rows or rows as written, and stays bounded", () => {
  const tail = new CommittedTail();
  tail.add(["x".repeat(50), "y".repeat(10)], 60);
  assert.deepEqual(tail.rows(60, true), [2]);
  assert.deepEqual(tail.rows(20, true), [4]);
  assert.deepEqual(tail.rows(20, false), [2], "a terminal that does not re-flow keeps the rows");
  for (let i = 0; i < 1000; i++) tail.add([`line ${i}`], 60);
  assert.equal(tail.rows(60, true).length, 200, "at most 200 blocks");
  for (let i = 0; i < 100; i++) tail.add(["a", "b", "c", "d", "e"], 60);
  assert.equal(tail.rows(60, true).length, 60, "at most 300 rows (as written)");
  assert.deepEqual(tail.redraw(59, 60), ["a", "b", "c", "d", "e"]);
});

Deno.test("CommittedTail.add() keeps each block of a commit apart, or all as one", () => {
  const tail = new CommittedTail();
  const a = (columns: number) => wrapText("alpha beta gamma delta", columns);
  const b = (columns: number) => ["", `b at ${columns}`];
  tail.add([...a(80), ...b(80)], 80, [a, b]);
  assert.deepEqual(tail.rows(80, true), [1, 2]);
  assert.deepEqual(tail.redraw(1, 10), ["", "b at 10"]);
  // Blocks that do not give the lines: one block, drawn by all of them.
  tail.add(["something else"], 80, [a, b]);
  assert.deepEqual(tail.rows(80, true), [1, 2, 1]);
  assert.deepEqual(tail.redraw(2, 80), [...a(80), ...b(80)]);
});
