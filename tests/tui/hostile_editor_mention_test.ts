/**
 * Hostile `@` mentions in what the person sends (a pasted page or log, collapsed behind a marker
 * so the person never sees it): they cannot hold tern's only thread.
 */
import { deepEqual, ok } from "node:assert/strict";
import {
  completePath,
  expandMentions,
  MAX_MENTIONS,
  withoutTrailingPunctuation,
} from "../../src/tui/mentions.ts";
import { attachNamedImages, namedImages } from "../../src/cli/interactive/image_mentions.ts";
import { loadConfig } from "../../src/config/load.ts";
import { MAX_IMAGES_PER_REQUEST } from "../../src/llm/images.ts";

/** `@` and a long run of closing punctuation that does not end the word. */
const STALL = "@" + ")".repeat(100_000) + "a";

Deno.test("expandMentions() and namedImages() take linear time on a run of punctuation", async () => {
  const ws = await Deno.makeTempDir();
  try {
    const started = performance.now();
    const expanded = await expandMentions(`look ${STALL} and ${STALL}.png`, ws);
    const images = namedImages(`look ${STALL}.png, ${STALL}`);
    const took = performance.now() - started;
    // A hang guard, not a speed target: the backtracking pattern took 59 s here, this takes
    // milliseconds, and a loaded machine is far from the bound.
    ok(took < 20_000, `took ${took.toFixed(0)} ms`);
    deepEqual(expanded.attached, []);
    deepEqual(images.paths, [`${STALL.slice(1)}.png`]);
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("withoutTrailingPunctuation() drops what ends a sentence, not the path", () => {
  deepEqual(withoutTrailingPunctuation("src/a.ts),"), "src/a.ts");
  deepEqual(withoutTrailingPunctuation("a.ts`'\"!?;:]}"), "a.ts");
  deepEqual(withoutTrailingPunctuation("..."), "");
  deepEqual(withoutTrailingPunctuation("dir/(x).md"), "dir/(x).md");
});

Deno.test("completePath() never offers a name a mention cannot hold (whitespace)", async () => {
  const ws = await Deno.makeTempDir();
  try {
    // Chosen from the list, `@setup guide.md` would attach `setup`, the repository's other file.
    await Deno.writeTextFile(`${ws}/setup`, "the other file");
    await Deno.writeTextFile(`${ws}/setup guide.md`, "the guide");
    await Deno.writeTextFile(`${ws}/setup\u3000notes.md`, "ideographic space");
    await Deno.mkdir(`${ws}/setup dir`);
    deepEqual(await completePath(ws, "set"), ["setup"]);
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("expandMentions() attaches a file once however it is spelled, and bounds the rest", async () => {
  const ws = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${ws}/big.txt`, "x".repeat(50_000));
    // A pasted text naming one file many ways would send it many times.
    const spellings = Array.from({ length: 40 }, (_, i) => `@${"./".repeat(i + 1)}big.txt`);
    const once = await expandMentions(spellings.join(" "), ws);
    deepEqual(once.attached, ["big.txt"]);
    ok(once.text.length < 60_000, `${once.text.length} characters`);
    // Thousands of mentions: a bounded number of lines, not one per mention.
    const many = Array.from({ length: 5_000 }, (_, i) => `@missing${i}`).join(" ");
    const bounded = await expandMentions(many, ws);
    ok(bounded.errors.length <= MAX_MENTIONS + 1, `${bounded.errors.length} lines`);
    ok(bounded.errors.at(-1)!.includes("4900 more mentions"), bounded.errors.at(-1));
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("attachNamedImages() says once that images past the limit are not attached", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir());
  const home = await Deno.makeTempDir();
  try {
    const { config } = await loadConfig({
      cwd: ws,
      env: { HOME: home, TERN_HOME: `${home}/.tern`, TERN_API_KEY: "x" },
    });
    const paths = Array.from({ length: 3_000 }, (_, i) => `shot${i}.png`);
    const { images, notes } = await attachNamedImages(ws, config, paths, () => undefined);
    deepEqual(images, []);
    ok(notes.length <= MAX_IMAGES_PER_REQUEST + 1, `${notes.length} notes`);
    ok(notes.at(-1)!.includes(`${3_000 - MAX_IMAGES_PER_REQUEST} more images`), notes.at(-1));
  } finally {
    await Deno.remove(ws, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
});
