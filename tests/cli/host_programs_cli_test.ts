/**
 * A folder of the workspace on the person's PATH (an activated `.venv/bin`) is where a sandboxed
 * command can write: the programs it leaves there (git, bash, bwrap, rmdir, nsenter, ...) are
 * never the ones tern starts on the host, in that run or the next. Commands in the sandbox still
 * find them first. The real `tern run`, bubblewrap and git.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { filesUnder } from "../support/files_under.ts";

/** Every program tern starts on the host by name, or that what it starts looks up by name. */
const PROGRAMS = [
  "git",
  "bash",
  "sh",
  "bwrap",
  "rmdir",
  "mkdir",
  "setsid",
  "setpriv",
  "find",
  "env",
  "nsenter",
];

testWith(
  [bwrapNeed],
  "tern never starts a program a command left in a workspace folder on PATH",
  async () => {
    const ws = await tempWorkspace();
    const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-path-link-" }));
    try {
      const venv = join(ws.dir, ".venv", "bin");
      await Deno.mkdir(venv, { recursive: true });
      // A second entry through a link into the workspace, to a folder not made yet (direnv's
      // `PATH_add bin` written through a linked home): a command makes it.
      await Deno.symlink(ws.dir, join(outside, "link"));
      const later = join(outside, "link", "bin");
      await Deno.writeTextFile(join(ws.dir, "f.txt"), "hi\n");
      await new Deno.Command("git", { args: ["init", "-q"], cwd: ws.dir }).output();
      // Written on the host only: tern's home is hidden from commands.
      const markers = join(ws.home, "markers");
      await Deno.mkdir(markers);
      // Each leaves a mark (possible on the host only), then runs the real program by its path.
      const plant = [
        "mkdir -p bin",
        ...PROGRAMS.map((name) =>
          `real=$(PATH=/usr/local/bin:/usr/bin:/bin command -v ${name}); ` +
          `printf '#!/bin/sh\\necho "$0" >> ${markers}/${name} 2>/dev/null\\n` +
          `exec %s "$@"\\n' "$real" > .venv/bin/${name}; chmod +x .venv/bin/${name}; ` +
          `cp .venv/bin/${name} bin/${name}`
        ),
      ].join("; ");
      const call = (id: string, name: string, args: unknown): ScriptedReply => ({
        toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
      });
      const env = {
        TERN_HOME: ws.home,
        HOME: ws.home,
        PATH: `${venv}:${later}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
      };
      // The parent plants, writes, runs a command and hands a subagent (a tern started by its
      // launcher) a command of its own.
      const first = await startScriptedServer((request: ModelRequest) => {
        const user = String(request.messages.find((m) => m.role === "user")?.content ?? "");
        const results = request.messages.filter((m) => m.role === "tool");
        if (user.includes("CHILDTASK")) {
          if (results.length === 0) return call("k1", "bash", { command: "command -v git" });
          return { text: `child saw ${results[0].content}` };
        }
        const steps = [
          call("c1", "bash", { command: `${plant}; echo planted` }),
          call("c2", "write", { path: "g.txt", content: "x\n" }),
          call("c3", "bash", { command: "echo second; command -v git" }),
          call("c4", "spawn_agent", { task_name: "look", message: "CHILDTASK", tools: ["bash"] }),
          call("c5", "wait_agent", {}),
        ];
        return steps[results.length] ?? { text: "done" };
      }, { chunkDelayMs: 0 });
      try {
        const run = await runTern(
          ["run", "--base-url", first.baseUrl, "-m", "scripted", "--mode", "bypass", "set up"],
          { cwd: ws.dir, env },
        );
        equal(run.code, 0, run.stderr);
        const results = JSON.stringify(first.requests.at(-1)?.body.messages);
        ok(results.includes("planted"), results);
        // Commands in the sandbox keep the person's PATH: the venv's programs come first there,
        // a subagent's commands too.
        ok(results.includes(`second\\n${venv}/git`), results);
        const waited = (first.requests.at(-1)?.body.messages as { content?: string }[])
          .map((m) => String(m.content ?? "")).find((text) => text.includes("child saw")) ?? "";
        ok(waited.includes(`${venv}/git\n`), waited);
        // The person is told: their own shell would run what was left there.
        ok(run.stderr.includes(".venv/bin") && run.stderr.includes("PATH"), run.stderr);
      } finally {
        await first.close();
      }
      // The next run starts its programs (git, the sandbox's checks) before any command, and the
      // person's own MCP server outside the sandbox, whose `env sh` looks `sh` up on its PATH.
      await Deno.writeTextFile(
        join(ws.home, "mcp.json"),
        JSON.stringify({
          servers: { probe: { command: "/usr/bin/env", args: ["sh", "-c", "exit 0"] } },
        }),
      );
      const second = await startScriptedServer([
        call("c6", "bash", { command: "echo third" }),
        { text: "done" },
      ], { chunkDelayMs: 0 });
      try {
        const run = await runTern(
          ["run", "--base-url", second.baseUrl, "-m", "scripted", "--mode", "bypass", "again"],
          { cwd: ws.dir, env },
        );
        equal(run.code, 0, run.stderr);
      } finally {
        await second.close();
      }
      // Commands that start programs of their own: the checks, and a rewind's preview.
      const doctor = await runTern(["doctor"], { cwd: ws.dir, env });
      ok(doctor.stdout.includes("bubblewrap"), doctor.stdout + doctor.stderr);
      // The first run's session (its first request) as rewind names it.
      const file = (await filesUnder(join(ws.home, "sessions")))
        .filter((path) => path.endsWith(".jsonl")).sort()[0];
      const id = file.split("/").at(-1)!.replace(/\.jsonl$/, "").split("_")[1];
      const entry = (await Deno.readTextFile(file)).split("\n").filter((line) => line !== "")
        .map((line) => JSON.parse(line)).find((e) => e.message?.role === "user")?.id;
      const rewind = await runTern(["sessions", "rewind", id, entry], { cwd: ws.dir, env });
      ok(rewind.code === 0, rewind.stdout + rewind.stderr);
      const ran: string[] = [];
      for await (const entry of Deno.readDir(markers)) ran.push(entry.name);
      deepEqual(ran.sort(), [], `started on the host from the workspace: ${ran.join(", ")}`);
    } finally {
      await ws.cleanup();
      await Deno.remove(outside, { recursive: true });
    }
  },
);
