/**
 * Leaving at once: Ctrl-D written into a pseudo-terminal (util-linux `script`) the moment the
 * prompt's bytes arrive, while tern still loads what it defers behind its first frame (the
 * renderers, the slash commands, then the models, the sandbox and the MCP servers). Nothing of
 * that may start after the shutdown and keep the process alive.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { declaredFlags, ROOT, tempWorkspace } from "../support/tern_process.ts";
import { descendants } from "../support/tmux.ts";
import { testWith, tmuxNeed } from "../support/needs.ts";

const PLACEHOLDER = "ask tern, or / for commands";
/** A run that has not ended by then is stuck: it is killed and the test fails. */
const STUCK_MS = 30_000;

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

testWith(
  [tmuxNeed],
  "tern interactive left with Ctrl-D as its prompt appears exits 0 and leaves nothing",
  async () => {
    const ws = await tempWorkspace();
    const tmp = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-e2e-tmp-" }));
    const denoDir = Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME") ?? "/", ".cache", "deno");
    const env = {
      HOME: ws.home,
      TERN_HOME: ws.home,
      TERN_MODEL: "scripted-model",
      TERN_API_KEY: "x",
      TERN_BASE_URL: "http://127.0.0.1:9/v1",
      TMPDIR: tmp,
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      TERM: "xterm-256color",
      LANG: "C.UTF-8",
      DENO_DIR: denoDir,
    };
    const tern = [
      Deno.execPath(),
      "run",
      ...declaredFlags(env, { cwd: ws.dir }),
      join(ROOT, "main.ts"),
    ];
    const child = new Deno.Command("script", {
      args: ["-qfec", `stty cols 80 rows 24; exec ${tern.map(shellQuote).join(" ")}`, "/dev/null"],
      cwd: ws.dir,
      env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    let stuck = false;
    const guard = setTimeout(async () => {
      stuck = true;
      for (const pid of await descendants(child.pid)) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch {
          // Gone already.
        }
      }
    }, STUCK_MS);
    try {
      const writer = child.stdin.getWriter();
      const decoder = new TextDecoder();
      let text = "";
      let wrote = false;
      for await (const bytes of child.stdout) {
        text += decoder.decode(bytes, { stream: true });
        if (!wrote && text.includes(PLACEHOLDER)) {
          wrote = true;
          await writer.write(new Uint8Array([0x04]));
          await writer.close();
        }
      }
      const status = await child.status;
      ok(!stuck, `tern did not end within ${STUCK_MS} ms of Ctrl-D:\n${text.slice(-1000)}`);
      ok(wrote, `no prompt:\n${text.slice(-1000)}`);
      equal(status.code, 0, text.slice(-1000));
      // Nothing was sent: the empty session is removed, and none is named to continue.
      ok(!text.includes("continue it with"), text.slice(-1000));
      deepEqual([...Deno.readDirSync(tmp)], [], "no sandbox folder was left behind");
    } finally {
      clearTimeout(guard);
      await ws.cleanup();
      await Deno.remove(tmp, { recursive: true });
    }
  },
);
