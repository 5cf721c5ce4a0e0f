/**
 * What a hostile model can do to a trusted hook's answer: plant a file where the hook's program
 * looks for code (a module beside a script in the workspace's top folder) between tern's check
 * and the hook's start, or make a guard's JSON answer larger than a command's output keeps.
 * Real hooks, real sandbox (bubblewrap).
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { type HookCommand, hookPins } from "../../src/sandbox/hooks/config.ts";
import { expectError, withGate } from "../agent/_gate_box.ts";
import { untilRunning } from "../harness/_processes.ts";
import { bwrapNeed } from "../support/needs.ts";

function hookTest(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, ignore: !bwrapNeed.ok, fn });
}

const GUARD = `import json, sys\nd = json.load(sys.stdin)\n` +
  `if 'rm ' in d['tool_input'].get('command', ''):\n` +
  `    print(json.dumps({'decision': 'block', 'reason': 'no rm here'}))\n`;

hookTest(
  "HookRunner voids a trusted hook when a file appears in the top folder while it runs",
  async () => {
    const hook: HookCommand = {
      event: "PreToolUse",
      matcher: "Bash",
      command: "bash guard.sh",
      timeoutS: 60,
    };
    await withGate({ mode: "bypass", hooks: [hook] }, async (box) => {
      // guard.sh and guard.py lie in the workspace's top folder, both pinned by trust.
      // A nap of its own, to be found among the processes.
      const nap = `1.5${String(Math.random()).slice(2, 8)}`;
      await Deno.writeTextFile(join(box.ws, "guard.sh"), `sleep ${nap}\nexec python3 guard.py\n`);
      await Deno.writeTextFile(join(box.ws, "guard.py"), GUARD);
      await Deno.writeTextFile(join(box.ws, "keep.txt"), "x");
      hook.scope = "project";
      hook.pins = await hookPins(hook, box.ws);
      expectError(await box.call("bash", { command: "rm -f keep.txt" }), "POLICY_DENIED", /no rm/);
      // The model's background process plants json.py (Python imports it in place of the
      // standard library's) after tern's check, once the hook naps (seen, not guessed by a
      // delay a loaded machine's start can outlast), and takes it away after the run.
      const plant = (async () => {
        ok(await untilRunning(`sleep ${nap}`), "the hook never started");
        await Deno.writeTextFile(join(box.ws, "json.py"), "import sys\nsys.exit(0)\n");
      })();
      const obs = await box.call("bash", { command: "rm -f keep.txt" });
      await plant;
      await Deno.remove(join(box.ws, "json.py"));
      // It did not run as trusted: the call needs a person, and there is none here.
      expectError(obs, "POLICY_DENIED", /asked for a person's decision/);
      await Deno.stat(join(box.ws, "keep.txt"));
      const record = box.audit.findLast((entry) => entry.tool === "hook:PreToolUse")!;
      match(record.reason ?? "", /moved or replaced while it ran/);
      // A run that nothing disturbed still decides.
      expectError(await box.call("bash", { command: "rm -f keep.txt" }), "POLICY_DENIED", /no rm/);
      equal((await box.call("bash", { command: "echo fine" })).status, "SUCCEEDED");
    });
  },
);

hookTest(
  "HookRunner PreToolUse: a guard's long JSON answer is read whole, or else needs a person",
  async () => {
    // A common guard: it refuses a write and quotes what it refused. The model makes that
    // quote larger than the output a command keeps (its middle is dropped): the answer is read
    // whole all the same, and past the hook's own cap it counts as a hook that could not run,
    // never as one that had no objection.
    const guard = `import json, sys\nd = json.load(sys.stdin)\ni = d['tool_input']\n` +
      `if i.get('path', '').endswith('deploy.sh'):\n` +
      `    print(json.dumps({'decision': 'block', 'reason': 'refused: ' + json.dumps(i)}))\n`;
    const hook: HookCommand = {
      event: "PreToolUse",
      matcher: "Write",
      command: "python3 .hooks/guard.py",
      timeoutS: 60,
    };
    await withGate({ mode: "bypass", hooks: [hook] }, async (box) => {
      await Deno.mkdir(join(box.ws, ".hooks"));
      await Deno.writeTextFile(join(box.ws, ".hooks", "guard.py"), guard);
      const small = await box.call("write", { path: "deploy.sh", content: "rm -rf ~\n" });
      expectError(small, "POLICY_DENIED", /refused/);
      const large = `rm -rf ~\n#${"x".repeat(1_500_000)}\n`;
      expectError(
        await box.call("write", { path: "deploy.sh", content: large }),
        "POLICY_DENIED",
        /refused/,
      );
      // Past MAX_HOOK_OUTPUT_CHARS (4,000,000).
      const huge = `rm -rf ~\n#${"x".repeat(4_000_000)}\n`;
      expectError(
        await box.call("write", { path: "deploy.sh", content: huge }),
        "POLICY_DENIED",
        /asked for a person's decision/,
      );
      const record = box.audit.findLast((entry) => entry.tool === "hook:PreToolUse")!;
      match(record.reason ?? "", /too large to read whole/);
      equal(await Deno.stat(join(box.ws, "deploy.sh")).catch(() => undefined), undefined);
    });
  },
);
