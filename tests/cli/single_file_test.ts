/**
 * bin/compile's single-file build, built and run: `dist/tern.js` (the bundle; `deno compile`
 * needs a denort this machine may not have, see `--bundle`) runs `tern run` against the scripted
 * model server with a `read`, a `bash` command line that needs the tree-sitter bash parser (the
 * wasm the file carries) and an `edit`, each of which must succeed in the tool worker the file
 * starts as itself; and its demo passes its own check of what it wrote. Built into a folder
 * under /var/tmp, removed afterwards.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { loadSession } from "../../src/session/load.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { bwrap } from "../sandbox/_bwrap_helpers.ts";
import { declaredFlags, ROOT, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";

function call(name: string, args: unknown, id: string): ScriptedReply {
  return { toolCalls: [{ id, name, arguments: JSON.stringify(args) }] };
}

/** The tool results the model was sent, in order. */
function toolResults(requests: { body: { messages?: unknown[] } }[]): string[] {
  const last = requests.at(-1)?.body.messages ?? [];
  return last.flatMap((message) => {
    const { role, content } = message as { role: string; content: unknown };
    return role === "tool" ? [typeof content === "string" ? content : JSON.stringify(content)] : [];
  });
}

const decoder = new TextDecoder();

/** Runs `dist/tern.js args` with the flags bin/tern would give tern for this command line. */
async function runArtifact(
  file: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    // --no-config, as bin/compile says to run it: nothing is resolved through a deno.json.
    args: ["run", "--no-config", ...declaredFlags(env, { cwd, args }), file, ...args],
    cwd,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

Deno.test("bin/compile --bundle builds one file whose tools all work and whose demo passes", async (t) => {
  // Outside the checkout (and outside /tmp, which commands see as their own): a deno.json above
  // the file would let it find node_modules, hiding a file it should carry.
  const out = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern-dist-test-" });
  const ws = await tempWorkspace();
  // tern's own process may write only its home and TMPDIR: the workspace is neither here.
  const tmp = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-dist-tmp-" }));
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "sk-test", TMPDIR: tmp };
  try {
    const build = await new Deno.Command(join(ROOT, "bin", "compile"), {
      args: ["--bundle", "--out", out],
      env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const said = decoder.decode(build.stdout);
    equal(build.code, 0, decoder.decode(build.stderr));
    match(said, new RegExp(`^built: bundle ${join(out, "tern.js")}$`, "m"));
    const file = join(out, "tern.js");
    equal([...Deno.readDirSync(out)].map((entry) => entry.name).join(","), "tern.js");

    await t.step("tern run: read, a parsed bash command line and edit all succeed", async () => {
      await Deno.writeTextFile(join(ws.dir, "a.txt"), "hello world\n");
      const server = await startScriptedServer([
        call("read", { path: "a.txt" }, "c0"),
        // Quotes, a pipe and a redirection: only the tree-sitter parser reads this line.
        call(
          "bash",
          { command: `cat "a.txt" | tr a-z A-Z > b.txt && echo "got $(cat b.txt)"` },
          "c1",
        ),
        call("edit", { path: "a.txt", old_string: "hello", new_string: "goodbye" }, "c2"),
        { text: "done" },
      ], { chunkDelayMs: 0 });
      try {
        const args = scriptedRunArgs(server.baseUrl, "go", false);
        const run = await runArtifact(file, args, ws.dir, env);
        equal(run.code, 0, run.stderr);
        const [read, bash, edit] = toolResults(server.requests);
        match(read, /hello world/);
        match(bash, /got HELLO WORLD/);
        ok(!/ERROR|Cannot/.test(edit), edit);
        equal(await Deno.readTextFile(join(ws.dir, "a.txt")), "goodbye world\n");
        equal(await Deno.readTextFile(join(ws.dir, "b.txt")), "HELLO WORLD\n");
      } finally {
        await server.close();
      }
    });

    await t.step("the printed run command works for another person's home", async () => {
      const line = /^run it as: (.*)$/m.exec(said)?.[1];
      ok(line !== undefined, said);
      const other = await Deno.makeTempDir({ prefix: "tern-dist-other-" });
      const server = await startScriptedServer([{ text: "hi" }], { chunkDelayMs: 0 });
      try {
        const run = await new Deno.Command("bash", {
          args: ["-c", `${line} run --base-url ${server.baseUrl} -m scripted hello`],
          cwd: ws.dir,
          env: {
            PATH: `${join(Deno.execPath(), "..")}:/usr/bin:/bin`,
            HOME: other,
            TERN_API_KEY: "sk-test",
            TMPDIR: tmp,
          },
          clearEnv: true,
          stdout: "piped",
          stderr: "piped",
        }).output();
        equal(run.code, 0, decoder.decode(run.stderr));
        // The session went to this person's tern home, which the build's flags never named.
        ok([...Deno.readDirSync(join(other, ".tern", "sessions"))].length > 0);
      } finally {
        await server.close();
        await Deno.remove(other, { recursive: true });
      }
    });

    await t.step("sessions rewind restores the files through the restore process", async () => {
      const folder = [...Deno.readDirSync(join(ws.home, "sessions"))][0].name;
      const log = [...Deno.readDirSync(join(ws.home, "sessions", folder))]
        .find((entry) => /_[0-9a-f-]+\.jsonl$/.test(entry.name))!.name;
      const session = await loadSession(join(ws.home, "sessions", folder, log));
      const user = session.entries.find((entry) =>
        entry.type === "message" && entry.message.role === "user"
      )!;
      const rewind = await runArtifact(
        file,
        ["sessions", "rewind", "-c", user.id, "--yes"],
        ws.dir,
        env,
      );
      equal(rewind.code, 0, rewind.stdout + rewind.stderr);
      equal(await Deno.readTextFile(join(ws.dir, "a.txt")), "hello world\n");
      equal(await Deno.stat(join(ws.dir, "b.txt")).catch(() => null), null);
    });

    await t.step({
      name: "web_fetch reaches the request process, whose guard refuses a loopback address",
      ignore: !bwrap.ok,
      fn: async () => {
        const url = "http://127.0.0.1:9/admin";
        const server = await startScriptedServer([call("web_fetch", { url }, "c0"), {
          text: "done",
        }], { chunkDelayMs: 0 });
        try {
          const args = ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass"];
          const run = await runArtifact(
            file,
            [...args, "--profile", ":external", "go"],
            ws.dir,
            env,
          );
          equal(run.code, 0, run.stderr);
          const [fetched] = toolResults(server.requests);
          match(fetched, /loopback \(127\.0\.0\.0\/8\); the web tools reach public addresses only/);
        } finally {
          await server.close();
        }
      },
    });

    await t.step("tern index chunks in worker threads the file starts as itself", async () => {
      const dir = join(ws.dir, "many");
      await Deno.mkdir(dir);
      // More files than a run chunks before it starts its workers.
      for (let i = 0; i < 30; i++) {
        await Deno.writeTextFile(join(dir, `m${i}.ts`), `export function fn${i}() {}\n`);
      }
      const index = await runArtifact(file, ["index", dir], ws.dir, env);
      equal(index.code, 0, index.stdout + index.stderr);
      match(
        index.stdout,
        /^30 indexed, 0 unchanged, 0 removed, 0 binary, 0 generated, 0 too large, 60 chunks/,
      );
    });

    await t.step("tern demo passes its check of what it wrote", async () => {
      const demo = await runArtifact(file, ["demo"], ws.dir, env);
      equal(demo.code, 0, demo.stdout + demo.stderr);
      // Each message completed, and the demo's own check of the disk and the session passed
      // (the plan's steps, the code search through the carried grammar, the resumed session).
      match(demo.stdout, /1\. COMPLETED: /);
      match(demo.stdout, /ran at once .* exports started after both/);
      match(demo.stdout, /code_search hits: .*src\/greet\.ts/);
      match(demo.stdout, /check: every file is as the tools wrote it/);
    });
  } finally {
    await ws.cleanup();
    await Deno.remove(out, { recursive: true });
    await Deno.remove(tmp, { recursive: true });
  }
});
