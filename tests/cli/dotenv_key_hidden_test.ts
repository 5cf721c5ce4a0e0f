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

testWith(
  [bwrapNeed],
  "tern run hides .envrc and .env.* files that hold tern's key anywhere in them, and no others",
  async () => {
    const ws = await tempWorkspace();
    try {
      const files: Record<string, string> = {
        ".envrc": `export TERN_API_KEY=${KEY}\n`,
        ".env.local": `AUTH_HEADER="Bearer ${KEY}"\n`,
        ".env": `KEYS=sk-old,${KEY}\n`,
        ".env.example": "TERN_API_KEY=changeme\n",
      };
      for (const [name, text] of Object.entries(files)) {
        await Deno.writeTextFile(join(ws.dir, name), text);
      }
      const command = Object.keys(files).map((name) => `base64 -w0 ${name}; echo`).join("; ");
      const { results, requests, stderr, code } = await runScriptedCalls(ws, [
        { name: "bash", args: { command: `${command}; echo end` } },
        { name: "read", args: { path: ".env.local" } },
        { name: "read", args: { path: ".env.example" } },
      ], { TERN_API_KEY: KEY });
      equal(code, 0, stderr);
      for (const name of [".envrc", ".env.local", ".env"]) {
        ok(!requests.includes(btoa(files[name]).slice(0, 20)), `the model was sent ${name}`);
        match(stderr, new RegExp(`${name.replaceAll(".", "\\.")} holds a key tern uses`));
      }
      ok(!requests.includes(KEY), "the key itself was sent");
      // A file without the key stays the tools' to read.
      ok(results[0].includes(btoa(files[".env.example"])), results[0]);
      ok(!stderr.includes(".env.example holds"), stderr);
      match(results[1], /^ERROR/);
      match(results[2], /changeme/);
    } finally {
      await ws.cleanup();
    }
  },
);
