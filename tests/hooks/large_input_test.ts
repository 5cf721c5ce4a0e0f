/**
 * Hooks whose input is large, that cannot run, or whose trusted script changed: real hook
 * scripts in the real sandbox (bubblewrap). A guard sees inputs past Linux's 128 KiB argument
 * limit; one that cannot run asks a person instead of passing, and the person hears why.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { HookCommand } from "../../src/sandbox/hooks/config.ts";
import { HookRunner } from "../../src/sandbox/hooks/run.ts";
import { PermissionGate } from "../../src/agent/permission_gate.ts";
import type { ToolContext } from "../../src/tools/define.ts";
import { builtinLoader, builtinTools } from "../../src/tools/mod.ts";
import { loadHooks } from "../../src/sandbox/hooks/load.ts";
import { trustHooks } from "./_trust.ts";
import { type Box, expectError, withGate } from "../agent/_gate_box.ts";
import { bwrapNeed } from "../support/needs.ts";

function hookTest(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, ignore: !bwrapNeed.ok, fn });
}

function pre(command: string, matcher = "Bash|Write", timeoutS = 60): HookCommand {
  return { event: "PreToolUse", matcher, command, timeoutS };
}

const GUARD = `grep -q BLOCKME && { echo "BLOCKME is not allowed" >&2; exit 2; }; exit 0`;

async function script(box: Box, name: string, body: string): Promise<void> {
  await Deno.mkdir(join(box.ws, ".hooks"), { recursive: true });
  await Deno.writeTextFile(join(box.ws, ".hooks", name), `#!/bin/bash\n${body}\n`);
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

/** A HookRunner over the box's sandbox whose warnings are kept in `told`. */
function runner(box: Box, hooks: HookCommand[], told: string[]): HookRunner {
  return new HookRunner({
    hooks,
    shell: () => ({ run: box.runtime.shell, confined: box.runtime.shellKind === "bwrap" }),
    warn: (text) => told.push(text),
    workspace: box.ws,
    sessionId: "test",
    transcriptPath: join(box.ternHome, "sessions", "test.jsonl"),
    profile: box.runtime.profile.name,
    mode: "bypass",
  });
}

/** `n` bytes that do not compress, as text. */
function noise(n: number): string {
  let text = "";
  while (text.length < n) {
    const bytes = crypto.getRandomValues(new Uint8Array(30_000));
    text += btoa(String.fromCharCode(...bytes));
  }
  return text.slice(0, n);
}

hookTest("HookRunner PreToolUse guard sees a write input past 128 KiB and blocks it", async () => {
  await withGate({ mode: "bypass", hooks: [pre("bash .hooks/guard.sh")] }, async (box) => {
    await script(box, "guard.sh", GUARD);
    const write = await box.call("write", { path: "BLOCKME.txt", content: "y".repeat(140_000) });
    expectError(write, "POLICY_DENIED", /BLOCKME is not allowed/);
    ok(!(await exists(join(box.ws, "BLOCKME.txt"))), "the write went ahead");
    const controls = Array.from({ length: 23_000 }, (_, i) => String.fromCharCode(1 + i % 8));
    const bash = await box.call("bash", { command: `touch BLOCKME-ran # ${controls.join("")}` });
    expectError(bash, "POLICY_DENIED", /BLOCKME is not allowed/);
    ok(!(await exists(join(box.ws, "BLOCKME-ran"))), "the command ran");
    // The whole input reached the hook: the end of a 140,000-character content too.
    await script(box, "guard.sh", `cat > "$CLAUDE_PROJECT_DIR/seen.json"`);
    const content = "y".repeat(140_000) + "END";
    const ran = await box.call("write", { path: "big.txt", content });
    equal(ran.status, "SUCCEEDED", JSON.stringify(ran));
    const seen = JSON.parse(await Deno.readTextFile(join(box.ws, "seen.json")));
    equal(seen.tool_input.content, content);
  });
});

hookTest("HookRunner PostToolUse runs on a huge tool output", async () => {
  const post: HookCommand = {
    event: "PostToolUse",
    matcher: "Bash",
    command: `cat > "$CLAUDE_PROJECT_DIR/post.json"; echo '{"hookSpecificOutput": ` +
      `{"additionalContext": "post hook ran"}}'`,
    timeoutS: 60,
  };
  await withGate({ mode: "bypass", hooks: [post] }, async (box) => {
    // About 600,000 characters that do not compress much.
    const obs = await box.call("bash", { command: "head -c 450000 /dev/urandom | base64 -w 0" });
    equal(obs.status, "SUCCEEDED", JSON.stringify(obs).slice(0, 300));
    if (obs.status !== "SUCCEEDED") return;
    match(
      obs.output,
      /--- BEGIN POSTTOOLUSE HOOK \w+ [^\n]*---\npost hook ran\n--- END POSTTOOLUSE HOOK/,
    );
    const seen = JSON.parse(await Deno.readTextFile(join(box.ws, "post.json")));
    equal(seen.hook_event_name, "PostToolUse");
    ok(seen.tern_output_cut > 0, "the output was cut to fit");
    ok(obs.output.startsWith(seen.tool_response.output.slice(0, 1000)));
  });
});

hookTest(
  "HookRunner PreToolUse hook that cannot run asks a person, who is told why",
  async () => {
    // Input too large to pass even compressed; a program that is not there.
    const hooks = [pre("bash .hooks/guard.sh", "Write"), pre("./.hooks/absent.sh", "Bash")];
    await withGate({ mode: "bypass", hooks }, async (box) => {
      await script(box, "guard.sh", GUARD);
      const write = await box.call("write", { path: "a.txt", content: noise(400_000) });
      expectError(write, "POLICY_DENIED", /A PreToolUse hook asked for a person's decision/);
      ok(!(await exists(join(box.ws, "a.txt"))), "the write went ahead");
      const bash = await box.call("bash", { command: "touch ran.txt" });
      expectError(bash, "POLICY_DENIED", /A PreToolUse hook asked for a person's decision/);
      ok(!(await exists(join(box.ws, "ran.txt"))), "the command ran");

      const told: string[] = [];
      const hooksOf = runner(box, hooks, told);
      const outcome = await hooksOf.fire("PreToolUse", {
        tool_name: "Write",
        tool_input: { path: "a.txt", content: noise(400_000) },
      }, { toolName: "write" });
      match(outcome.ask!, /could not run, so it could not check this call \(its input/);
      equal(outcome.notes.length, 1);
      match(outcome.notes[0], /is too large to pass to it; the call it should have checked/);
    });
    // ASK with a person: a call the policy allows is the person's to decide.
    await withGate({ mode: "ask", answers: ["once"], hooks }, async (box) => {
      const obs = await box.call("bash", { command: "echo hi" });
      equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
      equal(box.asked.length, 1);
      const request = box.events.find((event) => event.type === "permission_request");
      ok(request?.type === "permission_request");
      // tern's words say a hook asks; the hook's words are the note the person is shown.
      equal(request.reason, "A PreToolUse hook asks for a person's decision");
      equal(box.requests[0].note?.from, "a PreToolUse hook");
      match(box.requests[0].note!.text, /could not run, so it could not check this call/);
    });
  },
);

hookTest("PermissionGate shows the person the notes of a hook that failed", async () => {
  const hooks = [pre("cat >/dev/null; echo 'guard broke' >&2; exit 3", "Bash")];
  await withGate({ mode: "bypass", hooks }, async (box) => {
    // The box's runner has no warn: put one in that keeps what the person is told.
    const told: string[] = [];
    const gated = new PermissionGate({ ...box.gate.options, hooks: runner(box, hooks, told) });
    const ctx = { workspace: box.ws, signal: new AbortController().signal, callId: "c1" };
    const bash = builtinTools(builtinLoader()).find((tool) => tool.name === "bash")!;
    const obs = await gated.wrap(bash).run({ command: "echo hi" }, ctx as ToolContext);
    equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
    deepEqual(told.length, 1, told.join("\n"));
    match(told[0], /failed \(exit code 3\): guard broke/);
  });
});

hookTest("HookRunner a timeout past 2^31 ms still waits for the hook", async () => {
  for (const timeoutS of [3_000_000, Infinity]) {
    // The person's own hook: a one-shot sandbox of its own, timed by a plain timer.
    const hooks: HookCommand[] = [{
      ...pre(`sleep 1; cat >/dev/null; echo "slow no" >&2; exit 2`, "Bash", timeoutS),
      scope: "user",
    }];
    await withGate({ mode: "bypass", hooks }, async (box) => {
      const obs = await box.call("bash", { command: "touch ran.txt" });
      expectError(obs, "POLICY_DENIED", /slow no/);
      ok(!(await exists(join(box.ws, "ran.txt"))));
    });
  }
});

hookTest(
  "HookRunner refuses a trusted project hook whose script changed since trust, and asks",
  async () => {
    await withGate({ mode: "bypass", hooks: [] }, async (box) => {
      await script(box, "guard.sh", GUARD);
      await Deno.mkdir(join(box.ws, ".tern"));
      const settings = {
        hooks: {
          PreToolUse: [{
            matcher: "Bash",
            hooks: [{ type: "command", command: "./.hooks/guard.sh" }],
          }],
        },
      };
      await Deno.writeTextFile(join(box.ws, ".tern", "settings.json"), JSON.stringify(settings));
      await Deno.chmod(join(box.ws, ".hooks", "guard.sh"), 0o755);
      const places = { ternHome: box.ternHome, workspace: box.ws };
      await trustHooks(places, (await loadHooks(places)).sources.map((s) => s.source));
      const { active } = await loadHooks(places);
      equal(active.length, 1);
      const told: string[] = [];
      const hooks = runner(box, active, told);
      const fields = { tool_name: "Bash", tool_input: { command: "echo BLOCKME" } };
      const before = await hooks.fire("PreToolUse", fields, { toolName: "bash" });
      match(before.block!, /BLOCKME is not allowed/);
      // The model rewrites the guard mid-session.
      await Deno.writeTextFile(join(box.ws, ".hooks", "guard.sh"), "#!/bin/bash\nexit 0\n");
      for (let i = 0; i < 2; i++) {
        const after = await hooks.fire("PreToolUse", fields, { toolName: "bash" });
        equal(after.block, undefined);
        match(after.ask!, /its files changed since you trusted it: ".hooks\/guard.sh" changed/);
      }
      equal(told.length, 1, told.join("\n"));
      match(told[0], /will not run: its files changed since you trusted it/);
    });
  },
);
