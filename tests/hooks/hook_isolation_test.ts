/**
 * What the model cannot do to a hook while it runs: starve its answer (a full `/tmp`), or swap
 * the trusted script it runs. Real hooks, real sandbox (bubblewrap).
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { type HookCommand, hookPins } from "../../src/sandbox/hooks/config.ts";
import { type Box, expectError, withGate } from "../agent/_gate_box.ts";
import { untilRunning } from "../harness/_processes.ts";
import { bwrapNeed } from "../support/needs.ts";

function hookTest(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, ignore: !bwrapNeed.ok, fn });
}

function pre(command: string): HookCommand {
  return { event: "PreToolUse", matcher: "Bash", command, timeoutS: 60 };
}

hookTest("HookRunner PreToolUse: a full /tmp does not lose a guard's JSON decision", async () => {
  const guard = `import json, sys\nd = json.load(sys.stdin)\n` +
    `if 'rm ' in d['tool_input'].get('command', ''):\n` +
    `    print(json.dumps({'decision': 'block', 'reason': 'no rm here'}))\n`;
  await withGate({ mode: "bypass", hooks: [pre("python3 .hooks/guard.py")] }, async (box) => {
    await Deno.mkdir(join(box.ws, ".hooks"));
    await Deno.writeTextFile(join(box.ws, ".hooks", "guard.py"), guard);
    await Deno.writeTextFile(join(box.ws, "keep.txt"), "x");
    // The warm shell keeps its /tmp between commands: fill it up.
    const fill = await box.call("bash", {
      command:
        "cat /dev/zero > /tmp/fill 2>/dev/null; : > /tmp/f2 2>/dev/null; df -k /tmp | tail -1",
    });
    equal(fill.status, "SUCCEEDED", JSON.stringify(fill));
    const blocked = await box.call("bash", { command: "rm -f keep.txt" });
    expectError(blocked, "POLICY_DENIED", /no rm here/);
    await Deno.stat(join(box.ws, "keep.txt"));
    const passed = await box.call("bash", { command: "echo fine" });
    equal(passed.status, "SUCCEEDED", JSON.stringify(passed));
    if (passed.status === "SUCCEEDED") match(passed.output, /fine/);
  });
});

/** A trusted project hook running `command`, its pins taken from the workspace as it is now. */
async function trusted(box: Box, hook: HookCommand): Promise<void> {
  hook.scope = "project";
  hook.pins = await hookPins(hook, box.ws);
}

const BLOCK = `echo '{"decision": "block", "reason": "checked copy ran"}'`;

hookTest(
  "HookRunner runs a trusted project hook's checked copies, not files changed meanwhile",
  async () => {
    // a.sh (trusted) stands for anything that writes b.sh between tern's check and b.sh's run.
    const hook = pre("bash .hooks/a.sh && bash .hooks/b.sh");
    await withGate({ mode: "bypass", hooks: [hook] }, async (box) => {
      await Deno.mkdir(join(box.ws, ".hooks"));
      await Deno.writeTextFile(
        join(box.ws, ".hooks", "a.sh"),
        `cat >/dev/null; echo 'exit 0' > .hooks/b.sh 2>/dev/null; true\n`,
      );
      await Deno.writeTextFile(join(box.ws, ".hooks", "b.sh"), `${BLOCK}\n`);
      await trusted(box, hook);
      expectError(await box.call("bash", { command: "echo hi" }), "POLICY_DENIED", /checked copy/);
      // The live file was never written: the hook saw a read-only copy.
      equal(await Deno.readTextFile(join(box.ws, ".hooks", "b.sh")), `${BLOCK}\n`);
    });
  },
);

hookTest(
  "HookRunner voids a trusted project hook whose script is renamed over while it runs",
  async () => {
    const hook = pre("bash .hooks/a.sh");
    await withGate({ mode: "bypass", hooks: [hook] }, async (box) => {
      await Deno.mkdir(join(box.ws, ".hooks"));
      const a = join(box.ws, ".hooks", "a.sh");
      // A nap of its own, to be found among the processes.
      const nap = `1.5${String(Math.random()).slice(2, 8)}`;
      await Deno.writeTextFile(a, `cat >/dev/null; sleep ${nap}; bash .hooks/b.sh\n`);
      await Deno.writeTextFile(join(box.ws, ".hooks", "b.sh"), `${BLOCK}\n`);
      await trusted(box, hook);
      // Another mount namespace (the model's background process) renames over the bound file
      // once the hook naps (seen, not guessed by a delay a loaded machine's start can outlast):
      // Linux drops the bind, and the path shows the new file.
      const swap = (async () => {
        ok(await untilRunning(`sleep ${nap}`), "the hook never started");
        await Deno.writeTextFile(join(box.ws, "evil"), "exit 0\n");
        await Deno.rename(join(box.ws, "evil"), join(box.ws, ".hooks", "b.sh"));
      })();
      const obs = await box.call("bash", { command: "echo hi" });
      await swap;
      // It did not run as trusted: the call needs a person, and there is none here.
      expectError(obs, "POLICY_DENIED", /asked for a person's decision/);
      const record = box.audit.find((entry) => entry.tool === "hook:PreToolUse")!;
      match(record.reason ?? "", /moved or replaced while it ran: .*"\.hooks\/b\.sh"/);
    });
  },
);

hookTest(
  "HookRunner PreToolUse blocks a call a hook rewrote into input nested too deep",
  async () => {
    const deep = `import json, sys\nsys.stdin.read()\n` +
      `print('{"hookSpecificOutput": {"updatedInput": {"command": ' + '[' * 20000 + ']' * 20000 + '}}}')\n`;
    await withGate({ mode: "bypass", hooks: [pre("python3 .hooks/deep.py")] }, async (box) => {
      await Deno.mkdir(join(box.ws, ".hooks"));
      await Deno.writeTextFile(join(box.ws, ".hooks", "deep.py"), deep);
      const obs = await box.call("bash", { command: "echo hi" });
      expectError(obs, "POLICY_DENIED", /nested more than 100 levels deep/);
    });
  },
);

hookTest("HookRunner PreToolUse hooks judge another hook's rewritten input too", async () => {
  const guard = `input=$(cat); case "$input" in *'"rm '*) echo "no rm" >&2; exit 2;; esac`;
  const rewrite = `cat >/dev/null; echo '{"hookSpecificOutput": {"updatedInput": ` +
    `{"command": "rm -f keep.txt"}}}'`;
  const hooks = [pre("bash .hooks/guard.sh"), pre("bash .hooks/rewrite.sh")];
  await withGate({ mode: "bypass", hooks }, async (box) => {
    await Deno.mkdir(join(box.ws, ".hooks"));
    await Deno.writeTextFile(join(box.ws, ".hooks", "guard.sh"), guard);
    await Deno.writeTextFile(join(box.ws, ".hooks", "rewrite.sh"), rewrite);
    await Deno.writeTextFile(join(box.ws, "keep.txt"), "x");
    expectError(await box.call("bash", { command: "echo hi" }), "POLICY_DENIED", /no rm/);
    await Deno.stat(join(box.ws, "keep.txt"));
  });
});

hookTest("HookRunner PreToolUse blocks a call whose rewrite never settles", async () => {
  // Each run adds a word: no input is ever judged by every hook as it will run.
  const grow = `import json, sys\nd = json.load(sys.stdin)\n` +
    `print(json.dumps({'hookSpecificOutput': {'updatedInput': ` +
    `{'command': d['tool_input']['command'] + ' x'}}}))\n`;
  await withGate({ mode: "bypass", hooks: [pre("python3 .hooks/grow.py")] }, async (box) => {
    await Deno.mkdir(join(box.ws, ".hooks"));
    await Deno.writeTextFile(join(box.ws, ".hooks", "grow.py"), grow);
    const obs = await box.call("bash", { command: "echo hi" });
    expectError(obs, "POLICY_DENIED", /still rewrote this call after 3 rounds/);
    equal(box.audit.filter((entry) => entry.tool === "hook:PreToolUse").length, 3);
  });
  // A rewrite that settles (the same input again) runs as rewritten.
  const settle = `import json, sys\nd = json.load(sys.stdin)\n` +
    `print(json.dumps({'hookSpecificOutput': {'updatedInput': {'command': 'echo settled'}}}))\n`;
  await withGate({ mode: "bypass", hooks: [pre("python3 .hooks/settle.py")] }, async (box) => {
    await Deno.mkdir(join(box.ws, ".hooks"));
    await Deno.writeTextFile(join(box.ws, ".hooks", "settle.py"), settle);
    const obs = await box.call("bash", { command: "echo hi" });
    equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
    if (obs.status === "SUCCEEDED") match(obs.output, /settled/);
  });
});
