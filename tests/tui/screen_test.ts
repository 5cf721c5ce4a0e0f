import assert from "node:assert/strict";
import { Screen } from "../../src/tui/screen.ts";
import { visibleWidth } from "../../src/tui/width.ts";
import { VtScreen } from "../support/vt_screen.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";

// Exact widths, Markdown and diffs, as the interactive session has them once its prompt is up.
await loadRenderers();

/** A Screen writing into a VtScreen, recording every write. */
function setup(columns: number, rows: number, options: { synchronized?: boolean } = {}) {
  const vt = new VtScreen(columns, rows);
  const writes: string[] = [];
  const out = {
    write(text: string) {
      writes.push(text);
      vt.write(text);
    },
  };
  const screen = new Screen(out, { columns, rows }, options);
  return { vt, writes, screen };
}

Deno.test("Screen.commit() puts lines into scrollback in order and never rewrites them", () => {
  const { vt, writes, screen } = setup(40, 8);
  screen.render(["> typing", "status"], { row: 0, col: 8 });
  const committed: string[] = [];
  for (let i = 0; i < 30; i++) {
    const line = `committed line ${i}`;
    committed.push(line);
    screen.commit([line]);
    screen.render([`streaming ${i}`, "> typing", "status"], { row: 1, col: 8 });
  }
  assert.deepEqual(vt.text(), [...committed, "streaming 29", "> typing", "status"]);
  assert.ok(vt.scrollback().length > 0, "the committed lines scrolled into history");
  for (const line of committed) {
    const count = writes.filter((text) => text.includes(line + "\r")).length;
    assert.equal(count, 1, `"${line}" was written once`);
  }
  assert.deepEqual(vt.cursor, { row: 6, col: 8 });
  assert.equal(vt.cursorVisible, true);
});

Deno.test("Screen.render() redrawn 100 times leaves exactly the last frame below the commits", () => {
  const { vt, screen } = setup(50, 12);
  screen.commit(["first", "second"]);
  let last: string[] = [];
  for (let i = 0; i < 100; i++) {
    const height = 1 + (i * 7) % 6;
    last = Array.from(
      { length: height },
      (_, r) => `frame ${i} row ${r} ` + "x".repeat(1 + (i + r) % 20),
    );
    screen.render(last, i % 3 === 0 ? undefined : { row: height - 1, col: i % 10 });
    if (i % 25 === 24) screen.commit([`milestone ${i}`]);
  }
  assert.deepEqual(vt.text(), [
    "first",
    "second",
    "milestone 24",
    "milestone 49",
    "milestone 74",
    "milestone 99",
    ...last,
  ]);
  assert.equal(vt.cursorVisible, false, "the last frame (i = 99) had no cursor");
});

Deno.test("Screen.render() rewrites only the row that changed", () => {
  const { vt, writes, screen } = setup(80, 24);
  const lines = Array.from({ length: 8 }, (_, r) => `row ${r} ` + "abcdefghij".repeat(6));
  screen.render(lines);
  const full = writes.at(-1)!.length;
  const changed = [...lines];
  changed[3] = "row 3 changed";
  screen.render(changed);
  const delta = writes.at(-1)!;
  assert.ok(delta.includes("row 3 changed"));
  assert.ok(!delta.includes("row 2") && !delta.includes("row 4"), "unchanged rows are not sent");
  assert.ok(
    // Moves, a line clear and the auto-wrap off/on pair around the write.
    delta.length < "row 3 changed".length + 30,
    `a one-row change took ${delta.length} bytes`,
  );
  assert.ok(full > 8 * 60);
  assert.deepEqual(vt.text(), changed);
});

Deno.test("Screen.render() writes nothing when the frame is unchanged", () => {
  const { writes, screen } = setup(40, 10);
  screen.render(["a", "b"], { row: 1, col: 1 });
  const count = writes.length;
  screen.render(["a", "b"], { row: 1, col: 1 });
  assert.equal(writes.length, count);
  screen.render(["a", "b"], { row: 1, col: 0 });
  assert.equal(writes.length, count + 1, "a moved cursor is a change");
  screen.commit([]);
  assert.equal(writes.length, count + 1, "committing no lines writes nothing");
});

Deno.test("Screen.render() handles growth and shrink", () => {
  const { vt, screen } = setup(40, 10);
  screen.commit(["above"]);
  screen.render(["one"]);
  screen.render(["one", "two", "three", "four"]);
  assert.deepEqual(vt.text(), ["above", "one", "two", "three", "four"]);
  screen.render(["ONE", "two"]);
  assert.deepEqual(vt.text(), ["above", "ONE", "two"]);
  screen.render([]);
  assert.deepEqual(vt.text(), ["above"]);
  screen.render(["back", "again"], { row: 0, col: 2 });
  assert.deepEqual(vt.text(), ["above", "back", "again"]);
  assert.deepEqual(vt.cursor, { row: 1, col: 2 });
});

Deno.test("Screen.render() cuts lines wider than the terminal", () => {
  const { vt, screen } = setup(20, 10);
  screen.render(["a".repeat(50), "日本語".repeat(10), "\x1b[31m" + "r".repeat(30) + "\x1b[39m"]);
  const rows = vt.text();
  assert.equal(rows.length, 3, "no row wrapped");
  for (const row of rows) assert.ok(visibleWidth(row) <= 20, `"${row}" fits`);
  assert.ok(rows[0].endsWith("…") && rows[2].startsWith("rrr"));
  screen.render(["x".repeat(20), "y"]);
  assert.deepEqual(vt.text(), ["x".repeat(20), "y"], "a line exactly as wide as the terminal");
});

Deno.test("Screen.render() keeps the last rows - 1 lines of a tall frame", () => {
  const { vt, screen } = setup(30, 10);
  screen.commit(["history"]);
  const lines = Array.from({ length: 40 }, (_, i) => `line ${i}`);
  screen.render(lines, { row: 39, col: 3 });
  assert.deepEqual(vt.text(), ["history", ...lines.slice(31)]);
  assert.deepEqual(vt.cursor, { row: 9, col: 3 });
  assert.deepEqual(screen.frame, lines.slice(31));
  screen.render(lines, { row: 0, col: 0 });
  assert.equal(vt.cursorVisible, false, "a cursor on a dropped line is hidden");
  screen.render(["short"]);
  assert.deepEqual(vt.text().slice(-2), ["history", "short"]);
});

Deno.test("Screen.resize() to a narrower terminal leaves a correct screen", () => {
  const { vt, screen } = setup(60, 12);
  screen.commit(["done 1", "done 2"]);
  const lines = ["streaming " + "s".repeat(45), "> " + "e".repeat(50), "status " + "t".repeat(40)];
  screen.render(lines, { row: 1, col: 52 });
  vt.resize(25, 12);
  screen.resize({ columns: 25, rows: 12 });
  const rows = vt.text();
  assert.deepEqual(rows.slice(0, 2), ["done 1", "done 2"]);
  assert.equal(rows.length, 5, `no leftover rows: ${JSON.stringify(rows)}`);
  assert.ok(rows.slice(2).every((row) => visibleWidth(row) <= 25));
  assert.ok(
    rows[2].startsWith("streaming ") && rows[3].startsWith("> ") && rows[4].startsWith("status"),
  );
  assert.deepEqual(vt.cursor, { row: 3, col: 24 });
});

Deno.test("Screen.resize() to a wider terminal redraws the full lines", () => {
  const { vt, screen } = setup(20, 10);
  screen.commit(["kept"]);
  const lines = ["a".repeat(35), "b".repeat(5)];
  screen.render(lines);
  vt.resize(50, 10);
  screen.resize({ columns: 50, rows: 10 });
  assert.deepEqual(vt.text(), ["kept", ...lines]);
  screen.render(["c"]);
  assert.deepEqual(vt.text(), ["kept", "c"]);
});

Deno.test("Screen wraps every write in synchronized output only when asked", () => {
  const synced = setup(30, 8, { synchronized: true });
  synced.screen.render(["a"]);
  synced.screen.commit(["b"]);
  synced.screen.render(["c"], { row: 0, col: 1 });
  for (const text of synced.writes) {
    assert.ok(text.startsWith("\x1b[?2026h") && text.endsWith("\x1b[?2026l"));
  }
  assert.equal(synced.vt.synchronized, false);
  const plain = setup(30, 8);
  plain.screen.render(["a"]);
  plain.screen.setSynchronized(true);
  plain.screen.render(["b"]);
  plain.screen.setSynchronized(false);
  plain.screen.render(["c"]);
  assert.deepEqual(plain.writes.map((text) => text.includes("\x1b[?2026h")), [false, true, false]);
});

Deno.test("Screen.finish() clears the live region and leaves the cursor on a fresh line", () => {
  const { vt, screen } = setup(30, 8);
  screen.commit(["user: hi", "assistant: hello"]);
  screen.render(["> draft", "status"], { row: 0, col: 7 });
  screen.finish();
  assert.deepEqual(vt.text(), ["user: hi", "assistant: hello"]);
  assert.deepEqual(vt.cursor, { row: 2, col: 0 });
  assert.equal(vt.cursorVisible, true);
  vt.write("$ ");
  assert.deepEqual(vt.text(), ["user: hi", "assistant: hello", "$"]);
});

Deno.test("Screen.commit() with the next frame draws it in the same write, never the stale one", () => {
  const { vt, writes, screen } = setup(40, 8);
  screen.render(["⠋ bash  make", "waiting for approval", "status"]);
  const before = writes.length;
  screen.commit(["✓ bash  make"], { lines: ["> ", "status"], cursor: { row: 0, col: 2 } });
  assert.equal(writes.length, before + 1, "one write");
  assert.ok(!writes.at(-1)!.includes("waiting for approval"), "the old frame is not redrawn");
  assert.deepEqual(vt.text(), ["✓ bash  make", ">", "status"]);
  assert.deepEqual(vt.cursor, { row: 1, col: 2 });
  const after = writes.length;
  screen.render(["> ", "status"], { row: 0, col: 2 });
  assert.equal(writes.length, after, "the frame it drew is known: nothing to redraw");
});
