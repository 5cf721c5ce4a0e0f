import assert from "node:assert/strict";
import { exitCodeForError } from "../../src/cli/exit_codes.ts";
import { join } from "node:path";
import { showAudit, type ShowAuditOptions } from "../../src/cli/audit.ts";
import { TernError } from "../../src/core/errors.ts";
import { AuditLog, auditPath, type AuditRecord } from "../../src/sandbox/audit.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

async function withHome(fn: (home: string) => Promise<void>): Promise<void> {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern_cli_audit_" }));
  try {
    await fn(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

function record(overrides: Partial<AuditRecord>): AuditRecord {
  return {
    v: 1,
    time: "2026-11-30T02:26:23.456Z",
    callId: "call_1",
    tool: "read",
    args: { path: "src/main.ts" },
    profile: ":workspace",
    mode: "ask",
    decision: "allow",
    decidedBy: "profile",
    sandbox: "worker",
    status: "SUCCEEDED",
    durationMs: 12,
    ...overrides,
  };
}

async function writeAudit(path: string, records: AuditRecord[]): Promise<void> {
  const log = await AuditLog.open(path);
  for (const r of records) await log.append(r);
  await log.close();
}

/** Runs showAudit() and returns its exit code and output. */
async function show(options: Omit<ShowAuditOptions, "write">): Promise<[number, string]> {
  let out = "";
  const code = await showAudit({ ...options, write: (text) => out += text });
  return [code, out];
}

async function showError(options: Omit<ShowAuditOptions, "write">): Promise<TernError> {
  try {
    await show(options);
  } catch (error) {
    assert.ok(error instanceof TernError, `expected a TernError, got ${error}`);
    return error;
  }
  assert.fail("showAudit() did not throw");
}

Deno.test("showAudit() prints a line per call with decision, sandbox, result and Deno checks", async () => {
  await withHome(async (home) => {
    const denoAudit = join(home, "worker-1.deno.jsonl");
    await Deno.writeTextFile(
      denoAudit,
      [
        `{"v":1,"datetime":"2026-11-30T02:26:23Z","permission":"read","value":"/ws/src/main.ts"}`,
        `{"v":1,"datetime":"2026-11-30T02:26:23Z","permission":"read","value":"/ws/src"}`,
        `{"v":1,"datetime":"2026-11-30T02:26:23Z","permission":"env","value":"HOME"}`,
      ].join("\n") + "\n",
    );
    const path = auditPath(home, "s1");
    await writeAudit(path, [
      record({ denoAudit }),
      record({
        time: "2026-11-30T02:27:01Z",
        callId: "call_2",
        tool: "bash",
        args: { command: "git push", env: "GITHUB_TOKEN=abc123def456" },
        decision: "deny",
        decidedBy: "reviewer",
        reason: "pushes to\na remote",
        sandbox: "bwrap",
        status: "ERROR",
        code: "POLICY_DENIED",
        durationMs: 1500,
      }),
      record({
        callId: "call_3",
        tool: "bash",
        args: { command: "sleep 99" },
        decidedBy: "rule",
        rule: "bash:sleep",
        sandbox: "bwrap",
        status: "ERROR",
        code: "TIMEOUT",
        exitCode: null,
        durationMs: 30000,
        denoAudit: join(home, "gone.jsonl"),
      }),
    ]);
    await Deno.writeTextFile(path, '{"v":1,"time":"2026', { append: true });
    const [code, out] = await show({ ternHome: home, session: "s1" });
    assert.equal(code, 0);
    assert.equal(
      out,
      `Audit log "${path}": 3 tool calls\n` +
        "TIME                 TOOL  DECISION                              SANDBOX            RESULT                      DURATION  ARGS\n" +
        "2026-11-30 02:26:23  read  allow by profile                      worker :workspace  ok                          12ms      " +
        'path="src/main.ts"  deno: 3 permission checks (read 2, env 1)\n' +
        "2026-11-30 02:27:01  bash  deny by reviewer: pushes to a remote  bwrap :workspace   ERROR[POLICY_DENIED]        1500ms    " +
        'command="git push" env="GITHUB_TOKEN=[REDACTED:secret]"\n' +
        '2026-11-30 02:26:23  bash  allow by rule "bash:sleep"            bwrap :workspace   ERROR[TIMEOUT] exit killed  30000ms   ' +
        'command="sleep 99"  deno: audit file missing\n' +
        "1 malformed line skipped\n",
    );
  });
});

Deno.test("showAudit() without a session shows the newest audit file", async () => {
  await withHome(async (home) => {
    await writeAudit(auditPath(home, "old"), [record({ tool: "list" })]);
    await writeAudit(auditPath(home, "new"), [record({ tool: "glob" })]);
    await Deno.utime(auditPath(home, "old"), new Date(2020, 0, 1), new Date(2020, 0, 1));
    const [, out] = await show({ ternHome: home });
    assert.match(out, /^Audit log ".*\/audit\/new\.jsonl": 1 tool call\n/);
    assert.match(out, /\n2026-11-30 02:26:23 {2}glob {2}/);
  });
});

Deno.test("showAudit() without a session shows tern's newest log, not a newer Deno permission audit", async () => {
  await withHome(async (home) => {
    const deno = join(home, "audit", "deno-run1-worker-2.jsonl");
    await writeAudit(auditPath(home, "run1"), [record({ denoAudit: deno })]);
    // The worker restarted after the last call (a grant): its Deno audit file is the newer.
    await Deno.writeTextFile(
      deno,
      '{"v":1,"datetime":"2026-12-07T10:00:00Z","permission":"read","value":"/w/a"}\n',
    );
    await Deno.utime(auditPath(home, "run1"), new Date(2020, 0, 1), new Date(2020, 0, 1));
    const [, out] = await show({ ternHome: home });
    assert.match(out, /^Audit log ".*\/audit\/run1\.jsonl": 1 tool call\n/);
    assert.match(out, /path="src\/main\.ts" {2}deno: 1 permission check \(read 1\)/);
  });
});

Deno.test("showAudit() with json prints the records as JSON lines", async () => {
  await withHome(async (home) => {
    const records = [record({}), record({ callId: "call_2", exitCode: 0, sandbox: "bwrap" })];
    const path = join(home, "elsewhere", "run.jsonl");
    await writeAudit(path, records);
    await Deno.writeTextFile(path, "torn", { append: true });
    const [code, out] = await show({ ternHome: home, session: path, json: true });
    assert.equal(code, 0);
    assert.deepEqual(out.trimEnd().split("\n").map((line) => JSON.parse(line)), records);
  });
});

Deno.test("showAudit() reports an unknown session or no audit log with exit code 2", async () => {
  await withHome(async (home) => {
    const none = await showError({ ternHome: home });
    assert.equal(none.message, `No audit log in "${join(home, "audit")}"`);
    assert.equal(exitCodeForError(none), 2);
    await writeAudit(auditPath(home, "s1"), [record({})]);
    const unknown = await showError({ ternHome: home, session: "s2" });
    const none2 = "no session with that id (see tern sessions list)";
    assert.equal(
      unknown.message,
      `Unknown audit session "s2": no file "${auditPath(home, "s2")}" and ${none2}`,
    );
    assert.equal(exitCodeForError(unknown), 2);
    const path = join(home, "nope.jsonl");
    const missing = await showError({ ternHome: home, session: path });
    assert.equal(
      missing.message,
      `Unknown audit session "${path}": no file "${path}" and ${none2}`,
    );
    const bad = await showError({ ternHome: home, session: ".." });
    assert.equal(bad.message, `Unknown audit session "..": ${none2}`);
    assert.equal(exitCodeForError(bad), 2);
  });
});

Deno.test("showAudit() prints what the model wrote without a control a terminal would obey", async () => {
  await withHome(async (home) => {
    const path = auditPath(home, "s1");
    await writeAudit(path, [
      record({
        tool: "bash\x1b]0;pwned\x07",
        args: { command: "rm -rf ~ \x1b[2K\rls \u202e", description: "\u009b2J" },
        reason: "\x1b]52;c;eA==\x07allowed\rby",
      }),
    ]);
    const [code, out] = await show({ ternHome: home, session: "s1" });
    assert.equal(code, 0);
    // deno-lint-ignore no-control-regex
    assert.ok(!/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e]/.test(out), JSON.stringify(out));
    // The tool's name as called, its controls shown: never passed off as bash.
    assert.ok(out.includes("bash␛]0;pwned␇  allow by profile: allowed by"), out);
    // The arguments are JSON: their controls are shown escaped, a bidi override as its code.
    assert.ok(out.includes('command="rm -rf ~ \\u001b[2K\\rls ⟨U+202E⟩"'), out);
    assert.ok(out.includes('description="⟨U+009B⟩2J"'), out);
  });
});

Deno.test("tern audit refuses a file that is not an audit log with exit 2, naming it", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { HOME: ws.home, TERN_HOME: ws.home };
    const passwd = join(ws.dir, "passwd");
    await Deno.writeTextFile(passwd, "root:x:0:0:root:/root:/bin/bash\nbin:x:1:1::/:/bin/false\n");
    const refused = await runTern(["audit", passwd], { cwd: ws.dir, env });
    assert.equal(refused.code, 2, refused.stdout);
    assert.equal(refused.stdout, "");
    assert.match(
      refused.stderr,
      /Cannot show ".*\/passwd": it is not an audit log \(none of its 2 lines is a tool call's record\)/,
    );
    const json = await runTern(["audit", "--json", passwd], { cwd: ws.dir, env });
    assert.equal(json.code, 2, json.stdout);
    // A log of tern's with a damaged line is still one.
    const log = join(ws.dir, "run.jsonl");
    await writeAudit(log, [record({})]);
    await Deno.writeTextFile(log, "{not json\n", { append: true });
    const shown = await runTern(["audit", log], { cwd: ws.dir, env });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /1 tool call\n[\s\S]*1 malformed line skipped/);
  } finally {
    await ws.cleanup();
  }
});
