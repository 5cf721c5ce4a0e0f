/**
 * A key tern takes from the workspace's `.env` never reaches the model through that file: the
 * `.env` is hidden from commands and file tools for the run, so no encoding of it (`base64`,
 * `xxd`) slips past the masking of known keys. A `.env` without a key tern holds stays visible.
 * Real `tern run`, real bubblewrap; the model is the scripted server.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { runScriptedCalls } from "../support/scripted_calls.ts";
import { tempWorkspace } from "../support/tern_process.ts";

const KEY = "sk-dotenv-7f3a91c2e4b8d605";

const READS = [
  { name: "bash", args: { command: "base64 -w0 .env; echo; od -An -c .env | head -3; echo end" } },
  { name: "read", args: { path: ".env" } },
  { name: "grep", args: { pattern: "sk-", path: "." } },
];

testWith(
  [bwrapNeed],
  "tern run hides the workspace's .env from every tool when tern takes its key from it",
  async () => {
    const ws = await tempWorkspace();
    try {
      await Deno.writeTextFile(join(ws.dir, ".env"), `TERN_API_KEY=${KEY}\nPORT=3000\n`);
      const { results, requests, stderr, code } = await runScriptedCalls(ws, READS);
      equal(code, 0, stderr);
      equal(results.length, 3);
      // Nothing of the file, plain or encoded, reached the model.
      for (const text of [KEY, btoa(`TERN_API_KEY=${KEY}`).slice(0, 24), "PORT"]) {
        ok(!requests.includes(text), `the model was sent ${text}`);
      }
      match(results[0], /end/);
      match(results[1], /^ERROR/);
      match(
        stderr,
        /\.env holds a key tern uses \(TERN_API_KEY\): commands and file tools cannot see/,
      );
    } finally {
      await ws.cleanup();
    }
  },
);

testWith(
  [bwrapNeed],
  "tern run leaves a .env that holds no key of tern's to the tools",
  async () => {
    const ws = await tempWorkspace();
    try {
      await Deno.writeTextFile(join(ws.dir, ".env"), "PORT=3000\n");
      const { results, stderr, code } = await runScriptedCalls(ws, [READS[0]], {
        TERN_API_KEY: KEY,
      });
      equal(code, 0, stderr);
      ok(!stderr.includes(".env holds a key"), stderr);
      match(results[0], new RegExp(btoa("PORT=3000\n")));
    } finally {
      await ws.cleanup();
    }
  },
);
