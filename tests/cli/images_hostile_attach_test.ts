/**
 * Hostile input to what the person attaches: a folder named like an image is said to be no file
 * (not a hard link), images together over what a request carries are refused before the turn,
 * and a mentioned file that holds a key tern sends reaches the model masked.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { withScriptedServer } from "../support/scripted_server.ts";
import { runTern, runTernWithInput, tempWorkspace } from "../support/tern_process.ts";
import { expandMentions } from "../../src/tui/mentions.ts";
import { SecretMasker } from "../../src/sandbox/secrets.ts";

Deno.test("tern run --image says a folder named like an image is no regular file", async () => {
  const ws = await tempWorkspace();
  try {
    // A repository's folder: its link count is that of its subfolders, not of a hard link.
    await Deno.mkdir(join(ws.dir, "shots.png", "sub"), { recursive: true });
    await withScriptedServer([], async (server) => {
      const env = { TERN_HOME: join(ws.home, ".tern"), HOME: ws.home, ANTHROPIC_API_KEY: "k" };
      for (const image of ["shots.png", "."]) {
        const run = await runTern([
          "run",
          "--provider",
          "anthropic",
          "--base-url",
          server.baseUrl,
          "--model",
          "claude-sonnet-4-5",
          "--image",
          image,
          "look",
        ], { cwd: ws.dir, env });
        equal(run.code, 2, run.stderr);
        match(run.stderr, /Cannot attach image ".*": not a readable regular file/);
        ok(!run.stderr.includes("more than one link"), run.stderr);
      }
      equal(server.requests.length, 0, "nothing was sent");
    }, { chunkDelayMs: 0 });
  } finally {
    await ws.cleanup();
  }
});

/** A whole 1×1 PNG of `size` bytes: a private chunk of filler before its end. */
function pngOfSize(size: number): Uint8Array {
  const png = Uint8Array.fromBase64(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  );
  const filler = size - png.length - 12;
  const chunk = new Uint8Array(12 + filler);
  new DataView(chunk.buffer).setUint32(0, filler);
  chunk.set([0x70, 0x72, 0x56, 0x74], 4); // "prVt": ancillary, private
  return Uint8Array.from([...png.subarray(0, -12), ...chunk, ...png.subarray(-12)]);
}

Deno.test("tern run --image refuses images that together are over what one request carries", async () => {
  const ws = await tempWorkspace();
  try {
    // Each under the 5 MB limit; three are 10.5 MB, 14 MB of base64: a request carries 12.
    for (const name of ["a.png", "b.png", "c.png"]) {
      await Deno.writeFile(join(ws.dir, name), pngOfSize(3.5 * 1024 * 1024));
    }
    await withScriptedServer([], async (server) => {
      const env = { TERN_HOME: join(ws.home, ".tern"), HOME: ws.home, ANTHROPIC_API_KEY: "k" };
      const run = await runTern([
        "run",
        "--provider",
        "anthropic",
        "--base-url",
        server.baseUrl,
        "--model",
        "claude-sonnet-4-5",
        ...["a.png", "b.png", "c.png"].flatMap((image) => ["--image", image]),
        "look",
      ], { cwd: ws.dir, env });
      equal(run.code, 2, run.stderr);
      match(
        run.stderr,
        /Cannot attach image "c\.png": with the images before it, 10\.5 MB of images is over the 9\.0 MB one request carries; attach fewer or smaller images/,
      );
      equal(server.requests.length, 0, "nothing was sent");
    }, { chunkDelayMs: 0 });
  } finally {
    await ws.cleanup();
  }
});

Deno.test("expandMentions() masks the keys tern holds in a mentioned file and listing, as read does", async () => {
  const ws = await tempWorkspace();
  const key = "zq7HELDKEYVALUE0123456789abcdefXY";
  try {
    // A deploy script with the key tern sends, and a folder whose file name holds it.
    await Deno.writeTextFile(join(ws.dir, "deploy.sh"), `curl -H "x-api-key: ${key}" x\n`);
    await Deno.mkdir(join(ws.dir, "keys"));
    await Deno.writeTextFile(join(ws.dir, "keys", `${key}.txt`), "");
    const masker = new SecretMasker([key]);
    const expanded = await expandMentions("check @deploy.sh and @keys", ws.dir, {
      mask: (text) => masker.mask(text),
    });
    deepEqual(expanded.attached, ["deploy.sh", "keys"]);
    ok(!expanded.text.includes(key), expanded.text);
    match(expanded.text, /x-api-key: \[REDACTED/);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern's @-mention of a file holding the key it sends gives the model the file masked", async () => {
  const ws = await tempWorkspace();
  const key = "sk-mention-secret-5f2a9c7e1b3d4f60";
  try {
    Deno.writeTextFileSync(join(ws.dir, "deploy.sh"), `curl -H "x-api-key: ${key}" host\n`);
    await withScriptedServer([{ text: "Looked." }], async (server) => {
      const env = {
        HOME: ws.home,
        TERN_HOME: join(ws.home, ".tern"),
        TERN_BASE_URL: server.baseUrl,
        TERN_MODEL: "scripted-model",
        TERN_API_KEY: key,
        NO_COLOR: "1",
      };
      const run = await runTernWithInput([], "check @deploy.sh\n", { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
      equal(server.requests.length, 1);
      const sent = server.requests[0].modelRequest.messages.at(-1)!.content;
      ok(sent.includes('<file path="deploy.sh">'), sent);
      ok(sent.includes("curl -H"), sent);
      ok(!sent.includes(key), sent);
    });
  } finally {
    await ws.cleanup();
  }
});

Deno.test("a message's @image mentions together over what one request carries: the last is left out, said", async () => {
  const ws = await tempWorkspace();
  try {
    // Each under the 5 MB limit; three are 10.5 MB, 14 MB of base64: a request carries 12.
    for (const name of ["a.png", "b.png", "c.png"]) {
      await Deno.writeFile(join(ws.dir, name), pngOfSize(3.5 * 1024 * 1024));
    }
    await withScriptedServer([{ text: "Seen." }], async (server) => {
      const env = {
        TERN_HOME: join(ws.home, ".tern"),
        HOME: ws.home,
        ANTHROPIC_API_KEY: "k",
        NO_COLOR: "1",
      };
      const args = [
        "--provider",
        "anthropic",
        "--base-url",
        server.baseUrl,
        "--model",
        "claude-sonnet-4-5",
      ];
      const run = await runTernWithInput(args, "look at @a.png @b.png @c.png\n", {
        cwd: ws.dir,
        env,
      });
      equal(run.code, 0, run.stderr);
      match(
        run.stdout.replace(/\s+/g, " "),
        /Cannot attach image "c\.png": with the images before it, 10\.5 MB of images is over the 9\.0 MB one request carries/,
      );
      equal(server.requests.length, 1);
      const messages = server.requests[0].body.messages as { role: string; content: unknown }[];
      const content = messages.filter((m) => m.role === "user").at(-1)!.content as {
        type: string;
      }[];
      equal(content.filter((block) => block.type === "image").length, 2);
    }, { chunkDelayMs: 0 });
  } finally {
    await ws.cleanup();
  }
});
