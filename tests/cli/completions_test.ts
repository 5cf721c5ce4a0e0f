/** `tern completions bash|zsh|fish`: scripts generated from the help's tables, that complete. */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { COMMANDS } from "../../src/cli/args.ts";
import { ACTIONS, completionScript, optionWords } from "../../src/cli/completions.ts";
import { ALL_OPTIONS } from "../../src/cli/options.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { bashComplete } from "../support/bash_complete.ts";

const SHELLS = ["bash", "zsh", "fish"] as const;

Deno.test("completionScript() names every command, action and option of the help's tables", () => {
  ok(ALL_OPTIONS.length > 20 && COMMANDS.size > 15);
  for (const shell of SHELLS) {
    const script = completionScript(shell);
    const words = new Set(script.split(/[^A-Za-z0-9-]+/));
    for (const command of [...COMMANDS].filter((name) => name !== "child")) {
      ok(words.has(command), `${shell}: no command ${command}`);
    }
    for (const action of Object.values(ACTIONS).flat()) {
      ok(words.has(action), `${shell}: no action ${action}`);
    }
    for (const option of ALL_OPTIONS) {
      // fish spells them `-l name -s x`, bash and zsh `--name -x`.
      const spelled = shell === "fish"
        ? [`-l ${option.name}`, ...(option.short ? [`-s ${option.short}`] : [])]
        : optionWords(option);
      for (const word of spelled) ok(script.includes(word), `${shell}: no option ${word}`);
    }
    ok(script.includes("stream-json"), `${shell}: no values of --output`);
  }
});

Deno.test("completionScript('bash') completes flags, commands, actions and option values in bash", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tern-completion-" });
  try {
    const script = join(dir, "tern.bash");
    await Deno.writeTextFile(script, completionScript("bash"));
    deepEqual(await bashComplete(script, ["tern", "--mo"]), ["--mode", "--model"]);
    deepEqual(await bashComplete(script, ["tern", "sess"]), ["sessions"]);
    deepEqual(await bashComplete(script, ["tern", "-C", "/tmp", "sessions", "f"]), ["fork"]);
    deepEqual(await bashComplete(script, ["tern", "mcp", "t"]), ["tools", "trust"]);
    deepEqual(await bashComplete(script, ["tern", "-o", "s"]), ["stream-json"]);
    await Deno.mkdir(join(dir, "sub"));
    deepEqual(await bashComplete(script, ["tern", "--cwd", join(dir, "s")]), [join(dir, "sub")]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tern completions prints each shell's script and refuses an unknown shell", async () => {
  const ws = await tempWorkspace();
  try {
    for (const shell of SHELLS) {
      const out = await runTern(["completions", shell], { cwd: ws.dir });
      equal(out.code, 0, out.stderr);
      equal(out.stdout, completionScript(shell).trimEnd() + "\n");
    }
    const wrong = await runTern(["completions", "tcsh"], { cwd: ws.dir });
    equal(wrong.code, 2);
    ok(wrong.stderr.includes('Unknown shell "tcsh"'), wrong.stderr);
  } finally {
    await ws.cleanup();
  }
});
