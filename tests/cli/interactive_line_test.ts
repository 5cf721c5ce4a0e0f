/**
 * `tern` with no command and stdin/stdout not terminals: line mode, one message or slash command
 * per line, driven against the scripted model server.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { withScriptedServer } from "../support/scripted_server.ts";
import { runTernWithInput, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern in line mode runs messages and slash commands from stdin, in order", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer(
      [{ text: "First answer." }, { text: "Second answer." }],
      async (server) => {
        const env = {
          HOME: ws.home,
          TERN_HOME: join(ws.home, ".tern"),
          TERN_BASE_URL: server.baseUrl,
          TERN_MODEL: "scripted-model",
          TERN_API_KEY: "sk-line-mode-secret",
          NO_COLOR: "1",
        };
        const input = [
          "/save the build uses make",
          "/thinking high",
          "/model nosuch/other-model",
          "how does the build work",
          "/memory",
          "/nonsense",
          "and again",
          "/cost",
        ].join("\n") + "\n";
        const run = await runTernWithInput([], input, { cwd: ws.dir, env });
        // Every line ran; /model's refusal was the first that failed: a slash command's 2.
        equal(run.code, 2, run.stderr);
        const out = run.stdout;
        ok(out.includes("First answer.") && out.includes("Second answer."), out);
        ok(out.indexOf("First answer.") < out.indexOf("Second answer."), out);
        ok(/remembered \w+ \(project\): the build uses make/.test(out), out);
        ok(out.includes("thinking: high"), out);
        ok(out.includes('Unknown command "/nonsense"'), out);
        // /memory lists the saved fact.
        const listing = out.slice(out.indexOf("› /memory"), out.indexOf("› /nonsense"));
        ok(/[0-9a-f]{8} the build uses make/.test(listing), listing);
        // A model that cannot be used is refused and changes nothing.
        ok(out.includes('Unknown provider "nosuch"'), out);
        for (const request of server.requests) equal(request.body.model, "scripted-model");
        ok(/input \d+ tokens/.test(out), out);
        // The remembered fact went with the message it bears on, not with the other one, and
        // never in the system prompt (which stays the same for the provider's cache).
        equal(server.requests.length, 2);
        const [first, second] = server.requests.map((request) => request.modelRequest.messages);
        ok(first.at(-1)!.content.includes("- the build uses make"), first.at(-1)!.content);
        ok(!second.at(-1)!.content.includes("the build uses make"), second.at(-1)!.content);
        for (const messages of [first, second]) {
          ok(messages[0].role === "system" && !messages[0].content.includes("uses make"));
        }
        // Plain text: no escape sequences with NO_COLOR and no terminal; the key never shows.
        ok(!out.includes("\x1b"), JSON.stringify(out.slice(0, 200)));
        ok(!out.includes("sk-line-mode-secret") && !run.stderr.includes("sk-line-mode-secret"));
      },
    );
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern in line mode: /resume brings back the session's model; /model switches it", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer(
      [
        { text: "From the first run." },
        { text: "Resumed." },
        { text: "With a third model." },
      ],
      async (server) => {
        const env = {
          HOME: ws.home,
          TERN_HOME: join(ws.home, ".tern"),
          TERN_BASE_URL: server.baseUrl,
          TERN_API_KEY: "x",
          NO_COLOR: "1",
        };
        const first = await runTernWithInput(
          ["run", "--model", "earlier-model", "-o", "json", "first task"],
          "",
          { cwd: ws.dir, env },
        );
        equal(first.code, 0, first.stderr);
        const id = JSON.parse(first.stdout).session as string;
        const run = await runTernWithInput(
          [],
          `/resume ${id}\nsecond task\n/model third-model\nthird task\n`,
          {
            cwd: ws.dir,
            env: { ...env, TERN_MODEL: "scripted-model" },
          },
        );
        equal(run.code, 0, run.stderr);
        ok(run.stdout.includes(`resumed session ${id.slice(0, 8)}`), run.stdout);
        // The resumed transcript is shown, and the next turn continues it with its model.
        ok(run.stdout.includes("first task"), run.stdout);
        equal(server.requests.length, 3);
        equal(server.requests[1].body.model, "earlier-model");
        const messages = server.requests[1].modelRequest.messages.map((m) => m.content);
        ok(messages.includes("first task") && messages.includes("second task"), String(messages));
        // /model with a bare name switches on the same (unnamed, base-URL) provider.
        equal(server.requests[2].body.model, "third-model");
      },
    );
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern in line mode shows warnings given while the session opened", async () => {
  // Said before the app was attached (the project's .env chose the model's server): kept and
  // shown once it is, not dropped.
  const ws = await tempWorkspace();
  try {
    await withScriptedServer([{ text: "Answer." }], async (server) => {
      await Deno.writeTextFile(join(ws.dir, ".env"), `TERN_BASE_URL=${server.baseUrl}\n`);
      const env = {
        HOME: ws.home,
        TERN_HOME: join(ws.home, ".tern"),
        TERN_MODEL: "scripted-model",
        NO_COLOR: "1",
      };
      const run = await runTernWithInput([], "hello\n", { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
      const all = run.stdout + run.stderr;
      ok(all.includes(`the model's server is ${server.baseUrl}`), all);
      ok(all.includes("Answer."), all);
    });
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern in line mode exits non-zero when a message fails, as tern run would", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer([{ text: "First answer." }, { text: "" }], async (server) => {
      const env = {
        HOME: ws.home,
        TERN_HOME: join(ws.home, ".tern"),
        TERN_MODEL: "scripted-model",
        TERN_BASE_URL: server.baseUrl,
        NO_COLOR: "1",
      };
      // The second answer is empty: EMPTY_RESPONSE, which `tern run` exits 5 for.
      const run = await runTernWithInput([], "one\ntwo\n", { cwd: ws.dir, env });
      equal(run.code, 5, run.stdout + run.stderr);
      ok((run.stdout + run.stderr).includes("First answer."));
    });
    // No server at all: the message cannot be sent, an error tern run exits non-zero for too.
    const unreachable = await runTernWithInput([], "hello\n", {
      cwd: ws.dir,
      env: {
        HOME: ws.home,
        TERN_HOME: join(ws.home, ".tern"),
        TERN_MODEL: "scripted-model",
        TERN_BASE_URL: "http://127.0.0.1:9/v1",
        TERN_MAX_RETRIES: "0",
        NO_COLOR: "1",
      },
    });
    ok(unreachable.code !== 0, unreachable.stdout + unreachable.stderr);
  } finally {
    await ws.cleanup();
  }
});
