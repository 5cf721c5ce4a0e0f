/**
 * The permission question's proposed diff never prints a file the model may not read: a write to
 * a link that leads out of the workspace (`k -> ~/.ssh/id_rsa`) or to a file the person's deny
 * rules hide (`.env -> config/prod.env` hides `config/prod.env`) shows no diff and says why,
 * while the call's own content is still shown. The real tern in a terminal (tmux), `tern run
 * --mode ask` and the interactive dialog, against the scripted model server.
 */
import { match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { bwrapNeed, testWith, tmuxNeed } from "../support/needs.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { tempWorkspace } from "../support/tern_process.ts";
import { startTernInTmux } from "../support/tmux.ts";
import { dialogReady, send, withTern } from "../support/tmux_run.ts";

const KEY = "PRIVATE-KEY-Q-4f8a27";
const PROD = "PROD-SECRET-Q-b61e09";
const QUESTION = "[y] allow once";

const write = (id: string, path: string, content: string): ScriptedReply => ({
  toolCalls: [{ id, name: "write", arguments: JSON.stringify({ path, content }) }],
});

/** Two writes the person is asked about (and denies), then an answer. */
const SCRIPT: ScriptedReply[] = [
  write("c0", "k", "NEW-CONTENT-Q-1\n"),
  write("c1", "config/prod.env", "NEW-CONTENT-Q-2\n"),
  { text: "Both were denied." },
];

/**
 * A home with a private key outside the workspace, tern's home with the person's deny rule, and
 * a workspace whose `k` links to the key and whose `.env` links to `config/prod.env`.
 */
async function setUp(dir: string, ternHome: string, home: string): Promise<void> {
  await Deno.mkdir(join(home, ".ssh"), { recursive: true });
  await Deno.writeTextFile(join(home, ".ssh", "id_rsa"), `${KEY}\n`);
  await Deno.writeTextFile(
    join(ternHome, "config.jsonc"),
    JSON.stringify({ rules: [{ action: "deny", path: "**/.env" }] }),
  );
  await Deno.mkdir(join(dir, "config"));
  await Deno.writeTextFile(join(dir, "config", "prod.env"), `${PROD}\n`);
  await Deno.symlink("config/prod.env", join(dir, ".env"));
  await Deno.symlink(join(home, ".ssh", "id_rsa"), join(dir, "k"));
}

/** Fails unless `screen` shows why there is no diff and the new content, and no secret. */
function showsNoSecret(screen: string, content: string, why: RegExp): void {
  ok(!screen.includes(KEY) && !screen.includes(PROD), screen);
  match(screen, why);
  ok(screen.includes(content), `the call's content is still shown:\n${screen}`);
}

testWith(
  [tmuxNeed, bwrapNeed],
  "tern run --mode ask shows no diff of a file a link leads to outside the workspace or into a denied one",
  async () => {
    const ws = await tempWorkspace();
    const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-ask-home-" }));
    const server = await startScriptedServer(SCRIPT, { chunkDelayMs: 0 });
    try {
      await setUp(ws.dir, ws.home, home);
      const tern = await startTernInTmux({
        cwd: ws.dir,
        home: ws.home,
        baseUrl: server.baseUrl,
        args: ["run", "--mode", "ask", "write them"],
        env: { HOME: home },
        columns: 160,
        rows: 50,
      });
      try {
        const first = await tern.waitForText(QUESTION, { timeoutMs: 60_000 });
        showsNoSecret(first, "NEW-CONTENT-Q-1", /\(no diff: it leads out of the workspace/);
        await tern.type("n");
        await tern.keys("Enter");
        const second = await tern.waitFor(
          (screen) => screen.includes("NEW-CONTENT-Q-2") && screen.trimEnd().endsWith("deny:"),
          "the second question",
          { scrollback: true },
        );
        showsNoSecret(second, "NEW-CONTENT-Q-2", /\(no diff: your deny rules keep/);
        await tern.type("n");
        await tern.keys("Enter");
        const done = await tern.waitForText("TERN_EXIT=", { scrollback: true });
        ok(!done.includes(KEY) && !done.includes(PROD), done);
        match(done, /Both were denied\./);
      } finally {
        await tern.close();
      }
    } finally {
      await server.close();
      await ws.cleanup();
      await Deno.remove(home, { recursive: true });
    }
  },
);

testWith(
  [tmuxNeed, bwrapNeed],
  "the interactive permission dialog shows no diff of a file the model may not read",
  async () => {
    const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-ask-home-" }));
    try {
      await withTern(SCRIPT, {
        columns: 160,
        rows: 50,
        env: { HOME: home },
        setup: (dir, ternHome) => setUp(dir, ternHome, home),
      }, async ({ tern }) => {
        await send(tern, "write them");
        const first = await tern.waitForText(QUESTION);
        showsNoSecret(first, "NEW-CONTENT-Q-1", /\(no diff: it leads out of the workspace/);
        await dialogReady();
        await tern.keys("n");
        const second = await tern.waitFor(
          (screen) => screen.includes("NEW-CONTENT-Q-2") && screen.includes(QUESTION),
          "the second dialog",
        );
        showsNoSecret(second, "NEW-CONTENT-Q-2", /\(no diff: your deny rules keep/);
        await dialogReady();
        await tern.keys("n");
        const done = await tern.waitForText("Both were denied.");
        ok(!done.includes(KEY) && !done.includes(PROD), done);
      });
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
);
