import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { createGrepTool } from "../../src/tools/grep.ts";
import { createReadTool, MAX_READ_BYTES } from "../../src/tools/read.ts";
import { call, failed, succeeded, withSandbox, writeFiles } from "./_helpers.ts";

const read = createReadTool();

function numbered(n: number): string {
  return Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
}

Deno.test("read() prints numbered lines in cat -n style", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.ts": "const a = 1;\n\tindented\n" });
    const obs = await call(read, ws, { path: "a.ts" });
    equal(succeeded(obs), "     1\tconst a = 1;\n     2\t\tindented");
    ok(obs.status === "SUCCEEDED");
    deepEqual(obs.details, { kind: "file", path: "a.ts", lines: 2, truncated: false });
  });
});

Deno.test("read() shows a window with offset and limit and says how to read on", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "n.txt": numbered(10) });
    const out = succeeded(await call(read, ws, { path: "n.txt", offset: 3, limit: 2 }));
    equal(
      out,
      "     3\tline 3\n     4\tline 4\n\n(showing lines 3-4 of 10; use offset=5 to read more)",
    );
    const tail = succeeded(await call(read, ws, { path: "n.txt", offset: 9 }));
    equal(tail, "     9\tline 9\n    10\tline 10\n\n(showing lines 9-10 of 10)");
  });
});

Deno.test("read() stops at 2000 lines by default and says so", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "big.txt": numbered(2500) });
    const out = succeeded(await call(read, ws, { path: "big.txt" }));
    ok(out.startsWith("     1\tline 1\n"));
    ok(out.includes("  2000\tline 2000\n"));
    ok(!out.includes("line 2001"));
    ok(
      out.endsWith("(showing lines 1-2000 of 2500; use offset=2001 to read more)"),
      out.slice(-80),
    );
  });
});

Deno.test("read() cuts long lines with a marker and hides CR of CRLF files", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "long.txt": `${"x".repeat(3000)}\r\nshort\r\n` });
    const out = succeeded(await call(read, ws, { path: "long.txt" }));
    const [first, second] = out.split("\n");
    equal(first, `     1\t${"x".repeat(2000)} [... line cut at 2000 characters]`);
    equal(second, "     2\tshort");
  });
});

Deno.test("read() refuses binary files", async () => {
  await withSandbox(async ({ ws }) => {
    await Deno.writeFile(join(ws, "img.png"), new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]));
    const message = failed(await call(read, ws, { path: "img.png" }), "EXECUTION_FAILED");
    equal(message, 'Cannot read "img.png": binary file (7 bytes)');
  });
});

const PNG_HEAD = [
  0x89,
  0x50,
  0x4e,
  0x47,
  0x0d,
  0x0a,
  0x1a,
  0x0a,
  0,
  0,
  0,
  13,
  0x49,
  0x48,
  0x44,
  0x52,
];

Deno.test("read() returns an image file as an image part, named by its hash", async () => {
  await withSandbox(async ({ ws }) => {
    const bytes = Uint8Array.from(atob(ONE_PIXEL_PNG), (c) => c.charCodeAt(0));
    await Deno.writeFile(join(ws, "shot.png"), bytes);
    const obs = await call(read, ws, { path: "shot.png" });
    equal(succeeded(obs), `Image "shot.png" (image/png, ${bytes.length} bytes) follows.`);
    ok(obs.status === "SUCCEEDED");
    equal(obs.images?.length, 1);
    const [image] = obs.images!;
    equal(image.mediaType, "image/png");
    equal(image.data, btoa(String.fromCharCode(...bytes)));
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    equal(image.sha256, [...digest].map((b) => b.toString(16).padStart(2, "0")).join(""));
  });
});

/** The bytes of `text`, one per character (a "binary string"). */
function bytesOf(text: string): Uint8Array {
  return Uint8Array.from(text, (char) => char.charCodeAt(0));
}

/** A whole 1×1 PNG. */
const ONE_PIXEL_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

Deno.test("read() refuses an image cut short or with a broken header, naming why", async () => {
  await withSandbox(async ({ ws }) => {
    const whole = Uint8Array.from(atob(ONE_PIXEL_PNG), (c) => c.charCodeAt(0));
    const cases: Array<[string, Uint8Array, RegExp]> = [
      ["cut.png", whole.subarray(0, 40), /not a whole PNG image \(no PNG header|cut short/],
      ["head.png", new Uint8Array(PNG_HEAD), /not a whole PNG image \(no PNG header \(IHDR\)\)/],
      // JPEG's magic number, then text: no frame, no scan.
      ["text.jpg", bytesOf("\xff\xd8\xff not a jpeg at all"), /not a whole JPEG image/],
      ["gif.gif", bytesOf("GIF89a\x00\x00\x01\x00\x00\x00\x00\x00"), /GIF image \(a width/],
    ];
    for (const [name, bytes, why] of cases) {
      await Deno.writeFile(join(ws, name), bytes);
      const message = failed(await call(read, ws, { path: name }), "EXECUTION_FAILED");
      match(message, why, name);
    }
  });
});

Deno.test("read() refuses an image over the size limit and says what to do, without reading it", async () => {
  await withSandbox(async ({ ws }) => {
    const path = join(ws, "huge.png");
    await Deno.writeFile(path, new Uint8Array(PNG_HEAD));
    // Sparse: the size says 6 MB, nothing past the header is written.
    await Deno.truncate(path, 6 * 1024 * 1024);
    const message = failed(await call(read, ws, { path: "huge.png" }), "EXECUTION_FAILED");
    equal(
      message,
      'Cannot attach image "huge.png": 6.0 MB is over the 5.0 MB limit; make it smaller first ' +
        "(tern does not downscale)",
    );
  });
});

Deno.test("read() refuses an image whose header claims a side over 8000 pixels (a bomb's shape)", async () => {
  await withSandbox(async ({ ws }) => {
    const whole = Uint8Array.from(atob(ONE_PIXEL_PNG), (c) => c.charCodeAt(0));
    // 70 bytes on disk, 100,000 × 100,000 pixels claimed: a provider refuses it, every turn.
    whole.set([0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0], 16);
    await Deno.writeFile(join(ws, "bomb.png"), whole);
    const obs = await call(read, ws, { path: "bomb.png" });
    equal(
      failed(obs, "EXECUTION_FAILED"),
      'Cannot attach image "bomb.png": 100000×100000 pixels is over the 8000-pixel limit of a ' +
        "side; make it smaller first (tern does not downscale)",
    );
  });
});

Deno.test("read() reports a missing file as NOT_FOUND with a hint", async () => {
  await withSandbox(async ({ ws }) => {
    const message = failed(await call(read, ws, { path: "nope.ts" }), "NOT_FOUND");
    ok(message.startsWith('Cannot read "nope.ts": not found'), message);
    ok(message.includes("glob"), message);
  });
});

Deno.test("read() refuses a directory and points to list", async () => {
  await withSandbox(async ({ ws }) => {
    await Deno.mkdir(join(ws, "src"));
    const message = failed(await call(read, ws, { path: "src" }), "EXECUTION_FAILED");
    ok(message.includes("directory") && message.includes("list"), message);
  });
});

Deno.test("read() handles empty files and offsets past the end", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "empty.txt": "", "n.txt": numbered(3) });
    equal(succeeded(await call(read, ws, { path: "empty.txt" })), "(empty file)");
    const message = failed(await call(read, ws, { path: "n.txt", offset: 9 }), "INVALID_ARGUMENTS");
    ok(message.includes("offset 9 is past the end of the file (3 lines)"), message);
  });
});

Deno.test("read() refuses files over 10 MB unless a window is given", async () => {
  await withSandbox(async ({ ws }) => {
    const line = "y".repeat(99) + "\n";
    const count = Math.ceil(MAX_READ_BYTES / line.length) + 10;
    await Deno.writeTextFile(join(ws, "huge.log"), line.repeat(count));
    const message = failed(await call(read, ws, { path: "huge.log" }), "EXECUTION_FAILED");
    ok(message.includes("too large") && message.includes("offset") && message.includes("grep"));
    const out = succeeded(await call(read, ws, { path: "huge.log", offset: 5, limit: 2 }));
    equal(
      out,
      `     5\t${"y".repeat(99)}\n     6\t${"y".repeat(99)}\n\n` +
        "(showing lines 5-6; use offset=7 to read more)",
    );
  });
});

Deno.test("read() rejects bad arguments without reading", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.txt": "a\n" });
    for (
      const args of [{}, { path: 1 }, { path: "a.txt", extra: 1 }, { path: "a.txt", offset: 0 }]
    ) {
      failed(await call(read, ws, args), "INVALID_ARGUMENTS");
    }
  });
});

Deno.test("read() and grep() in JavaScript stop at a cancel in the middle of a large file", async () => {
  // Lines before the offset, or lines that do not match, were read without looking at the
  // signal: a read of a 1 TiB sparse file (a command's `truncate -s 1T`) past its text ran for
  // minutes, until the host killed the worker and every call on it.
  await withSandbox(async ({ ws }) => {
    const sparse = join(ws, "sparse.log");
    await Deno.writeTextFile(sparse, "line\n".repeat(2_000));
    await Deno.truncate(sparse, 2 ** 40);
    await Deno.writeTextFile(join(ws, "big.log"), "line\n".repeat(20_000_000));
    const tools: [string, { run: typeof read.run }, unknown][] = [
      ["read", read, { path: "sparse.log", offset: 5_000, limit: 1 }],
      ["grep", createGrepTool({ ripgrep: false }), { pattern: "nothing", path: "big.log" }],
    ];
    for (const [name, tool, args] of tools) {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), 300);
      const started = performance.now();
      const obs = await tool.run(args, { workspace: ws, signal: controller.signal });
      clearTimeout(timer);
      const took = performance.now() - started;
      ok(took < 5_000, `${name} took ${Math.round(took)} ms after a cancel at 300 ms`);
      equal(obs.status === "ERROR" && obs.code, "CANCELLED", `${name}: ${JSON.stringify(obs)}`);
    }
  });
});
