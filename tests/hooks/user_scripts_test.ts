/**
 * The person's own hooks run scripts kept in `<ternHome>/hooks`, through the real `tern run` in
 * real bubblewrap: that folder alone of tern's home is shown to them, read-only; a project's hook
 * naming the same path does not find it; a folder that is a link shows nothing; and a hook that
 * cannot start is told to the person once, not only written to the audit log.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { loadHooks } from "../../src/sandbox/hooks/load.ts";
import { trustHooks } from "./_trust.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern } from "../support/tern_process.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

/** Blocks a bash call whose input says BLOCKME; notes what it sees of `ternHome`. */
function guard(ternHome: string): string {
  return `#!/bin/bash
input=$(cat)
ls -A "${ternHome}" > "$CLAUDE_PROJECT_DIR/guard-saw.txt" 2>&1
case "$input" in *BLOCKME*) echo "the guard says no" >&2; exit 2;; esac
exit 0
`;
}

interface Places {
  root: string;
  ws: string;
  home: string;
  ternHome: string;
}

/** A workspace and a home folder; tern's home is `~/.tern`, or a folder outside the home. */
async function places(ternHomeOutside = false): Promise<Places> {
  const root = await Deno.realPath(await Deno.makeTempDir({ dir: "/var/tmp", prefix: "hooks-" }));
  const ws = join(root, "ws");
  const home = join(root, "home");
  const ternHome = ternHomeOutside ? join(root, "tern-home") : join(home, ".tern");
  for (const dir of [join(ws, ".tern"), join(ternHome, "sessions"), join(home, ".ssh")]) {
    await Deno.mkdir(dir, { recursive: true });
  }
  await Deno.writeTextFile(join(ternHome, "sessions", "old.jsonl"), "a session\n");
  await Deno.writeTextFile(join(home, ".ssh", "id_ed25519"), "PRIVATE KEY\n");
  return { root, ws, home, ternHome };
}

async function writeScript(path: string, text: string): Promise<void> {
  await Deno.writeTextFile(path, text);
  await Deno.chmod(path, 0o755);
}

function preToolUse(command: string): string {
  return JSON.stringify({
    hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command }] }] },
  });
}

/** `tern run` whose model makes the bash `calls` one after another. */
async function run(at: Places, calls: string[]): Promise<{ stderr: string }> {
  let round = 0;
  const server = await startScriptedServer(() => {
    const command = calls[round];
    return command === undefined ? { text: "done" } : {
      toolCalls: [{ id: `c${round++}`, name: "bash", arguments: JSON.stringify({ command }) }],
    };
  });
  try {
    const out = await runTern(
      ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass", "hello"],
      { cwd: at.ws, env: { HOME: at.home, TERN_HOME: at.ternHome } },
    );
    equal(out.code, 0, out.stderr);
    return { stderr: out.stderr };
  } finally {
    await server.close();
  }
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

const told = (stderr: string) => stderr.match(/The PreToolUse hook [^\n]* cannot run[^\n]*/g) ?? [];

testWith(
  [bwrapNeed],
  "tern run: the person's hook in <ternHome>/hooks runs, read-only, and exit 2 blocks bash",
  async () => {
    for (const outside of [false, true]) {
      const at = await places(outside);
      try {
        const script = join(at.ternHome, "hooks", "guard.sh");
        await Deno.mkdir(join(at.ternHome, "hooks"));
        await writeScript(script, guard(at.ternHome));
        await Deno.writeTextFile(
          join(at.ternHome, "settings.json"),
          preToolUse(outside ? script : "~/.tern/hooks/guard.sh"),
        );
        const { stderr } = await run(at, [
          "touch BLOCKME-ran",
          // The model's own command sees nothing of tern's home and cannot write its hooks.
          `ls ${at.ternHome} > cmd-saw.txt 2>&1; echo evil > ${script}; ` +
          `touch ${at.ternHome}/hooks/new.sh; true`,
        ]);
        ok(!(await exists(join(at.ws, "BLOCKME-ran"))), "the guard did not block the call");
        equal(told(stderr).length, 0, stderr);
        // The hook saw its folder and nothing else of tern's home.
        equal((await Deno.readTextFile(join(at.ws, "guard-saw.txt"))).trim(), "hooks");
        // Masked with the home folder (absent), or hidden (an empty folder).
        match(await Deno.readTextFile(join(at.ws, "cmd-saw.txt")), /^$|No such file/);
        equal(await Deno.readTextFile(script), guard(at.ternHome));
        ok(!(await exists(join(at.ternHome, "hooks", "new.sh"))));
      } finally {
        await Deno.remove(at.root, { recursive: true });
      }
    }
  },
);

testWith(
  [bwrapNeed],
  "tern run: a project hook naming <ternHome>/hooks/guard.sh does not find it, told once",
  async () => {
    const at = await places();
    try {
      const script = join(at.ternHome, "hooks", "guard.sh");
      await Deno.mkdir(join(at.ternHome, "hooks"));
      await writeScript(script, guard(at.ternHome));
      await Deno.writeTextFile(join(at.ws, ".tern", "settings.json"), preToolUse(script));
      const workspace = { ternHome: at.ternHome, workspace: at.ws };
      await trustHooks(workspace, (await loadHooks(workspace)).sources.map((s) => s.source));
      const { stderr } = await run(at, ["touch BLOCKME-1", "touch BLOCKME-2"]);
      // A PreToolUse hook that cannot start lets nothing pass unchecked: each call it should
      // check needs a person (none in BYPASS: denied), and the person hears why, once.
      ok(!(await exists(join(at.ws, "BLOCKME-1"))));
      ok(!(await exists(join(at.ws, "BLOCKME-2"))));
      ok(!(await exists(join(at.ws, "guard-saw.txt"))), "the project hook ran the script");
      const lines = told(stderr);
      equal(lines.length, 1, stderr);
      ok(lines[0].includes(`"${script}"`), lines[0]);
      match(lines[0], /was not found in the sandbox \(exit code 127/);
      match(lines[0], /so each call it should check needs your decision/);
      match(lines[0], /a project's hooks see the workspace, never tern's home/);
    } finally {
      await Deno.remove(at.root, { recursive: true });
    }
  },
);

testWith(
  [bwrapNeed],
  "tern run: a <ternHome>/hooks that is a link (to ~/.ssh, into tern's home, to /) shows nothing",
  async () => {
    const targets = (at: Places) => [
      join(at.home, ".ssh"),
      join(at.ternHome, "sessions"),
      "/",
    ];
    for (let i = 0; i < 3; i++) {
      const at = await places();
      try {
        const target = targets(at)[i];
        // A script the hook would run if the link were followed.
        if (target !== "/") await writeScript(join(target, "guard.sh"), guard(at.ternHome));
        await Deno.symlink(target, join(at.ternHome, "hooks"));
        await Deno.writeTextFile(
          join(at.ternHome, "settings.json"),
          preToolUse(
            'ls -A ~/.tern/hooks/ > "$CLAUDE_PROJECT_DIR/listed.txt" 2>&1; ' +
              "~/.tern/hooks/guard.sh",
          ),
        );
        const { stderr } = await run(at, ["touch BLOCKME-ran"]);
        const listed = await Deno.readTextFile(join(at.ws, "listed.txt"));
        match(listed, /No such file or directory/, `${target}: ${listed}`);
        ok(!(await exists(join(at.ws, "guard-saw.txt"))), `${target}: the script ran`);
        const lines = told(stderr);
        equal(lines.length, 1, stderr);
        match(lines[0], /your own hooks see the workspace and "[^"]*\/hooks" \(read-only/);
      } finally {
        await Deno.remove(at.root, { recursive: true });
      }
    }
  },
);

testWith(
  [bwrapNeed],
  "tern sandbox explain names the hooks folder the person's own hooks see, and only when it is shown",
  async () => {
    const at = await places();
    try {
      const env = { HOME: at.home, TERN_HOME: at.ternHome, TERN_API_KEY: "k" };
      const explain = (output: string) =>
        runTern(["sandbox", "explain", "-o", output], { cwd: at.ws, env });
      let text = await explain("text");
      equal(text.code, 0, text.stderr);
      ok(!text.stdout.includes("your own hooks"), text.stdout);
      await Deno.mkdir(join(at.ternHome, "hooks"));
      text = await explain("text");
      match(
        text.stdout,
        new RegExp(`your own hooks \\(not a project's\\) see ${at.ternHome}/hooks read-only`),
      );
      const json = await explain("json");
      equal(JSON.parse(json.stdout).layers.hookScripts, join(at.ternHome, "hooks"));
      // A link is never shown (it could lead anywhere), and explain says so by saying nothing.
      await Deno.remove(join(at.ternHome, "hooks"));
      await Deno.symlink(join(at.home, ".ssh"), join(at.ternHome, "hooks"));
      equal(JSON.parse((await explain("json")).stdout).layers.hookScripts, null);
    } finally {
      await Deno.remove(at.root, { recursive: true });
    }
  },
);

testWith(
  [bwrapNeed],
  "tern run: a hook that cannot start is told without a key its stderr quotes",
  async () => {
    const at = await places();
    const key = "sk-hook-stderr-KEY-0123456789abcdef";
    const server = await startScriptedServer([
      { toolCalls: [{ id: "c0", name: "bash", arguments: JSON.stringify({ command: "ls" }) }] },
      { text: "done" },
    ]);
    try {
      // The key lies in a workspace file the hook prints before exiting as "not found" does.
      await Deno.writeTextFile(join(at.ws, "key.txt"), `${key}\n`);
      await Deno.writeTextFile(
        join(at.ws, ".tern", "settings.json"),
        preToolUse("cat key.txt >&2; exit 127"),
      );
      const workspace = { ternHome: at.ternHome, workspace: at.ws };
      await trustHooks(workspace, (await loadHooks(workspace)).sources.map((s) => s.source));
      const out = await runTern(
        ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass", "hello"],
        { cwd: at.ws, env: { HOME: at.home, TERN_HOME: at.ternHome, TERN_API_KEY: key } },
      );
      equal(out.code, 0, out.stderr);
      const lines = told(out.stderr);
      equal(lines.length, 1, out.stderr);
      ok(lines[0].includes("[REDACTED]"), lines[0]);
      ok(!out.stderr.includes(key), out.stderr);
    } finally {
      await server.close();
      await Deno.remove(at.root, { recursive: true });
    }
  },
);
