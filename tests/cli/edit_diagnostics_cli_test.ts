/**
 * Diagnostics after edits end to end: `tern run` against the scripted model in a Deno project,
 * with `deno lsp` (kept warm) or `deno check` found on PATH and run in the sandbox.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";
import { bwrapNeed, type Need, testWith } from "../support/needs.ts";
import { assertNoProcessWith } from "../sandbox/_bwrap_helpers.ts";

/**
 * The Deno that runs the tests is the one `deno check` finds on PATH; inside the sandbox it must
 * be visible, which a copy under /tmp is not (commands get a private /tmp).
 */
const denoInSandbox: Need = {
  ok: !Deno.execPath().startsWith("/tmp/"),
  missing: "the test's Deno is under /tmp, which the sandbox hides",
};

function call(name: string, args: unknown, id: string): ScriptedReply {
  return { toolCalls: [{ id, name, arguments: JSON.stringify(args) }] };
}

for (
  const [how, settings, name] of [
    ["from a warm deno lsp", {}, "deno lsp"],
    ["from deno check when language servers are off", { languageServers: false }, "deno check"],
  ] as const
) {
  testWith(
    [bwrapNeed, denoInSandbox],
    `tern run: an edit that brings in a type error shows it; the one fixing it clears it (${how})`,
    async () => {
      const ws = await tempWorkspace();
      const server = await startScriptedServer([
        call("write", { path: "main.ts", content: 'export const n: number = "one";\n' }, "c1"),
        call("edit", { path: "main.ts", old_string: '"one"', new_string: "1" }, "c2"),
        call("write", { path: "notes.md", content: "no checker here\n" }, "c3"),
        { text: "done" },
      ], { chunkDelayMs: 0 });
      try {
        await Deno.writeTextFile(join(ws.dir, "deno.json"), "{}\n");
        // A loaded machine may take long to type-check: the result waits for it here.
        await Deno.writeTextFile(
          join(ws.home, "config.jsonc"),
          JSON.stringify({ diagnostics: { waitMs: 600_000, timeoutMs: 600_000, ...settings } }),
        );
        const run = await runTern(
          scriptedRunArgs(server.baseUrl, "fix"),
          { cwd: ws.dir, env: { TERN_HOME: ws.home, HOME: ws.home } },
        );
        equal(run.code, 0, run.stderr);
        const results = server.requests[3].modelRequest.messages.filter((m) => m.role === "tool")
          .map((m) => String(m.content));
        match(results[0], /^SUCCEEDED\n/);
        match(results[0], new RegExp(`Diagnostics \\(${name}\\) for "main\\.ts": 1 new error`));
        match(results[0], /\nmain\.ts:1:14 error: TS2322: Type 'string' is not assignable/);
        match(results[1], new RegExp(`Diagnostics \\(${name}\\) for "main\\.ts": none now`));
        ok(!results[2].includes("Diagnostics"), results[2]);
        // Nothing of the sandboxes (the server's among them) is left once tern has ended.
        await assertNoProcessWith(ws.dir);
      } finally {
        await server.close();
        await ws.cleanup();
      }
    },
  );
}

testWith(
  [bwrapNeed, denoInSandbox],
  "tern run: a language server's finding that comes after its change's result reaches the model",
  async () => {
    const ws = await tempWorkspace();
    const server = await startScriptedServer([
      call("write", { path: "main.ts", content: 'export const n: number = "one";\n' }, "c1"),
      { text: "done" },
      { text: "fixed now" },
    ], { chunkDelayMs: 0 });
    try {
      await Deno.writeTextFile(join(ws.dir, "deno.json"), "{}\n");
      // The result never waits: the server's answer (it has not even started) comes later.
      await Deno.writeTextFile(
        join(ws.home, "config.jsonc"),
        JSON.stringify({ diagnostics: { waitMs: 0, timeoutMs: 600_000 } }),
      );
      const run = await runTern(
        scriptedRunArgs(server.baseUrl, "go"),
        { cwd: ws.dir, env: { TERN_HOME: ws.home, HOME: ws.home } },
      );
      equal(run.code, 0, run.stderr);
      equal(JSON.parse(run.stdout).text, "fixed now");
      equal(server.requests.length, 3);
      const messages = server.requests[2].modelRequest.messages;
      const result = messages.find((m) => m.role === "tool")!;
      match(String(result.content), /Diagnostics \(deno lsp\) for "main\.ts" are still running/);
      const last = messages.at(-1)!;
      equal(last.role, "user");
      match(String(last.content), /^Diagnostics \(deno lsp\) for "main\.ts": 1 new error/);
      match(String(last.content), /\nmain\.ts:1:14 error: TS2322/);
    } finally {
      await server.close();
      await ws.cleanup();
    }
  },
);

testWith(
  [bwrapNeed],
  "tern run: a project config naming a diagnostics checker is refused",
  async () => {
    const ws = await tempWorkspace();
    try {
      await Deno.mkdir(join(ws.dir, ".tern"));
      await Deno.writeTextFile(
        join(ws.dir, ".tern", "config.jsonc"),
        JSON.stringify({
          diagnostics: { checkers: [{ name: "x", extensions: [".ts"], command: "touch pwned" }] },
        }),
      );
      const run = await runTern(["run", "--base-url", "http://127.0.0.1:9/v1", "-m", "x", "hi"], {
        cwd: ws.dir,
        env: { TERN_HOME: ws.home, HOME: ws.home },
      });
      equal(run.code, 2, run.stderr);
      match(run.stderr, /diagnostics.*it names commands tern runs without asking/s);
    } finally {
      await ws.cleanup();
    }
  },
);

testWith(
  [bwrapNeed],
  "tern run: a check that ends after its change's result reaches the model before the turn ends",
  async () => {
    const ws = await tempWorkspace();
    const server = await startScriptedServer([
      call("write", { path: "notes.txt", content: "a\nb\n" }, "c1"),
      { text: "done" },
      { text: "fixed now" },
    ], { chunkDelayMs: 0 });
    try {
      // The person's own checker, slower than the result waits.
      await Deno.writeTextFile(
        join(ws.home, "config.jsonc"),
        JSON.stringify({
          diagnostics: {
            waitMs: 0,
            checkers: [{
              name: "slowish",
              extensions: [".txt"],
              command: 'sleep 1; echo "{file}:2:1: error: found late"',
            }],
          },
        }),
      );
      const run = await runTern(
        scriptedRunArgs(server.baseUrl, "go"),
        { cwd: ws.dir, env: { TERN_HOME: ws.home, HOME: ws.home } },
      );
      equal(run.code, 0, run.stderr);
      equal(JSON.parse(run.stdout).text, "fixed now");
      equal(server.requests.length, 3);
      const messages = server.requests[2].modelRequest.messages;
      const result = messages.find((m) => m.role === "tool")!;
      match(String(result.content), /Diagnostics \(slowish\) for "notes\.txt" are still running/);
      const last = messages.at(-1)!;
      equal(last.role, "user");
      match(String(last.content), /^Diagnostics \(slowish\) for "notes\.txt": 1 new error/);
      match(String(last.content), /\nnotes\.txt:2:1 error: found late/);
    } finally {
      await server.close();
      await ws.cleanup();
    }
  },
);

testWith(
  [bwrapNeed],
  "tern run: a checker's finding that quotes the person's own key reaches the model masked",
  async () => {
    // A key in no format the masker knows of: only tern's knowledge of it can mask it.
    const key = "zq-own-key-7Hc4JpM9sDf3GaE6uVb1NoWi0";
    const ws = await tempWorkspace();
    const server = await startScriptedServer([
      call("write", { path: "notes.txt", content: "the key is below\n" }, "c1"),
      { text: "done" },
    ], { chunkDelayMs: 0 });
    try {
      await Deno.writeTextFile(join(ws.dir, "secret.txt"), `${key}\n`);
      // The person's checker prints a line of another file of the workspace as its finding.
      await Deno.writeTextFile(
        join(ws.home, "config.jsonc"),
        JSON.stringify({
          diagnostics: {
            waitMs: 600_000,
            timeoutMs: 600_000,
            checkers: [{
              name: "quoting",
              extensions: [".txt"],
              command: `echo "$(basename {file}):1: error: $(cat {workspace}/secret.txt)"`,
            }],
          },
        }),
      );
      const run = await runTern(
        scriptedRunArgs(server.baseUrl, "write"),
        { cwd: ws.dir, env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: key } },
      );
      equal(run.code, 0, run.stderr);
      const result = server.requests[1].modelRequest.messages.filter((m) => m.role === "tool")
        .map((m) => String(m.content))[0];
      match(result, /Diagnostics \(quoting\) for "notes\.txt": 1 new error/);
      ok(!JSON.stringify(server.requests[1].body).includes(key.slice(0, 20)), result);
    } finally {
      await server.close();
      await ws.cleanup();
    }
  },
);
