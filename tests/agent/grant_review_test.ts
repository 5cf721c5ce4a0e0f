/**
 * request_permissions under attack, against the real gate and sandbox: a hostile model asks
 * for more, and the reviewer is scripted to allow everything. Review modes must never widen
 * the sandbox on their own, and what is outside the workspace must stay byte-identical.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { Observation } from "../../src/core/observation.ts";
import type { Reviewer } from "../../src/sandbox/review.ts";
import type { PermissionChange } from "../../src/session/types.ts";
import { type Box, expectError, readRoots, withGate } from "./_gate_box.ts";

const allowAll: Reviewer = () => Promise.resolve({ decision: "allow", reason: "looks fine" });

/** The bytes of every file outside the workspace that an attack would aim at. */
async function outsideFiles(box: Box): Promise<Record<string, string>> {
  const files = [
    join(box.outside, "secret.txt"),
    join(box.ternHome, "config.jsonc"),
    join(box.root, ".ssh", "id_ed25519"),
  ];
  const found: Record<string, string> = {};
  for (const file of files) found[file] = await Deno.readTextFile(file);
  for await (const entry of Deno.readDir(box.ternHome)) {
    // tern's own copy of bash for the warm shell, written while the sandbox opens.
    if (/^shell-server(\.[\w-]+\.tmp)?$/.test(entry.name)) continue;
    found[`entry ${entry.name}`] = "";
  }
  return found;
}

function grantsOf(box: Box): string {
  return JSON.stringify(box.runtime.profile.grants);
}

function hostileRequests(box: Box): Array<Record<string, unknown>> {
  return [
    { commands: ["bash -c"], without_sandbox: true },
    { write: [box.outside] },
    { write: [join(box.outside, "secret.txt")] },
    { read: [box.root] },
    { write: [box.root] },
    { read: ["/"] },
    { read: [box.ternHome] },
    { write: [join(box.ternHome, "config.jsonc")] },
    { read: [join(box.root, ".ssh")] },
    { env: ["AWS_SECRET_ACCESS_KEY"] },
    { env: ["LD_PRELOAD"] },
    { read: [`${box.ws}/../../..`] },
    { hosts: ["attacker.example"] },
    { read: ["/etc"] },
  ];
}

async function attackOutside(box: Box): Promise<Observation[]> {
  const secret = join(box.outside, "secret.txt");
  const config = join(box.ternHome, "config.jsonc");
  return [
    await box.call("write", { path: secret, content: "pwned" }),
    await box.call("write", { path: config, content: '{ "mode": "bypass" }' }),
    await box.call("bash", { command: `echo pwned > ${secret}` }),
    await box.call("bash", { command: `echo '{"mode":"bypass"}' > ${config}` }),
    await box.call("bash", { command: `ln -s ${box.ternHome} link; echo x > link/trust.json` }),
  ];
}

Deno.test("request_permissions in auto mode: a reviewer that allows everything grants nothing wide", async () => {
  await withGate({ mode: "auto", reviewer: allowAll }, async (box) => {
    const before = await outsideFiles(box);
    const grants = grantsOf(box);
    for (const [i, hostile] of hostileRequests(box).entries()) {
      const obs = await box.call("request_permissions", { reason: "needed", ...hostile });
      expectError(obs, "POLICY_DENIED", /Not approved|never granted|Denied/);
      equal(grantsOf(box), grants, `request ${i} widened the sandbox`);
    }
    deepEqual(box.reviewed, [], "a wide request reached the reviewer");
    await attackOutside(box);
    deepEqual(await outsideFiles(box), before);
  });
});

Deno.test("request_permissions in auto mode: the reviewer may grant a narrow read", async () => {
  await withGate({ mode: "auto", reviewer: allowAll }, async (box) => {
    const obs = await box.call("request_permissions", {
      reason: "compare with the sibling project",
      read: [box.outside],
    });
    equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
    equal(box.reviewed.length, 1);
    ok(readRoots(box).includes(box.outside));
    equal(box.audit.at(-1)?.decidedBy, "reviewer");
  });
});

Deno.test("request_permissions in auto mode: a wide request goes to the person, not the reviewer", async () => {
  await withGate({ mode: "auto", reviewer: allowAll, answers: ["deny"] }, async (box) => {
    const obs = await box.call("request_permissions", { reason: "x", write: [box.outside] });
    expectError(obs, "POLICY_DENIED", /The user denied it/);
    deepEqual(box.reviewed, []);
    equal(box.asked.length, 1);
    const request = box.events.find((e) => e.type === "permission_request");
    ok(request?.type === "permission_request");
  });
});

Deno.test("request_permissions in bypass mode grants nothing and says how to get it", async () => {
  await withGate({ mode: "bypass" }, async (box) => {
    const before = await outsideFiles(box);
    const grants = grantsOf(box);
    const obs = await box.call("request_permissions", { reason: "x", read: [box.outside] });
    expectError(obs, "POLICY_DENIED", /--mode bypass grants nothing.*--mode ask/s);
    ok(obs.status === "ERROR" && obs.message.includes('"tool":"request_permissions"'));
    ok(obs.status === "ERROR" && obs.message.includes(join(box.ternHome, "config.jsonc")));
    for (const hostile of hostileRequests(box)) {
      expectError(
        await box.call("request_permissions", { reason: "x", ...hostile }),
        "POLICY_DENIED",
        /./,
      );
    }
    equal(grantsOf(box), grants);
    expectError(
      await box.call("read", { path: join(box.outside, "secret.txt") }),
      "POLICY_DENIED",
      /outside the workspace/,
    );
    await attackOutside(box);
    deepEqual(await outsideFiles(box), before);
  });
});

Deno.test("request_permissions in bypass mode: an allow rule of the person's config grants exactly what it lists", async () => {
  const rules = [{ action: "allow" as const, tool: "request_permissions", read: ["~/shared"] }];
  await withGate({ mode: "bypass", rules }, async (box) => {
    // A folder of the home folder the person's rule names (the sandbox hides it otherwise).
    const shared = join(box.root, "shared");
    await Deno.mkdir(shared);
    const wider = await box.call("request_permissions", {
      reason: "x",
      read: [shared],
      hosts: ["example.com"],
    });
    expectError(wider, "POLICY_DENIED", /--mode bypass grants nothing/);
    const written = await box.call("request_permissions", { reason: "x", write: [shared] });
    expectError(written, "POLICY_DENIED", /--mode bypass grants nothing/);
    const obs = await box.call("request_permissions", { reason: "x", read: [shared] });
    equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
    ok(readRoots(box).includes(shared));
    equal(box.audit.at(-1)?.decidedBy, "rule");
    match(box.audit.at(-1)?.rule ?? "", /allow tool "request_permissions" read \["~\/shared"\]/);
  });
});

Deno.test("request_permissions: a deny rule refuses even what a person would allow", async () => {
  const rules = [{ action: "deny" as const, tool: "request_permissions", reason: "no grants" }];
  await withGate({ answers: ["once"], rules }, async (box) => {
    const obs = await box.call("request_permissions", { reason: "x", read: [box.outside] });
    expectError(obs, "POLICY_DENIED", /no grants/);
    deepEqual(box.asked, []);
  });
});

Deno.test("request_permissions: tern's own folder is never granted, even by a person", async () => {
  await withGate({ answers: ["once", "once"] }, async (box) => {
    for (const path of [box.ternHome, join(box.ternHome, "sessions")]) {
      const obs = await box.call("request_permissions", { reason: "x", write: [path] });
      expectError(obs, "POLICY_DENIED", /tern's own folder.*never granted/);
    }
    deepEqual(box.asked, []);
  });
});

Deno.test("PermissionGate: write access to the home folder still leaves tern's home untouchable", async () => {
  await withGate({ answers: ["once", "session"], mode: "ask" }, async (box) => {
    const before = await outsideFiles(box);
    delete before[join(box.outside, "secret.txt")]; // the person granted writing there
    const obs = await box.call("request_permissions", {
      reason: "x",
      read: [box.root],
      write: [box.root],
    });
    equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
    // The grant works outside tern's home...
    const made = await box.call("write", { path: join(box.root, "made.txt"), content: "ok" });
    equal(made.status, "SUCCEEDED", JSON.stringify(made));
    // ...and the person's "for this session" for writes does not reach tern's home.
    const write = await box.call("write", {
      path: join(box.ternHome, "config.jsonc"),
      content: '{ "mode": "bypass" }',
    });
    equal(write.status, "ERROR", JSON.stringify(write));
    const worker = box.runtime.explain().worker ?? [];
    ok(worker.some((flag) => flag.startsWith("--deny-write=") && flag.includes(box.ternHome)));
    const after = await outsideFiles(box);
    delete after[join(box.outside, "secret.txt")];
    deepEqual(after, before);
  });
});

Deno.test("PermissionGate: commands never see tern's home, whatever was granted", async () => {
  const rules = [
    { action: "allow" as const, tool: "request_permissions", write: ["~"] },
  ];
  await withGate({ mode: "bypass", rules }, async (box) => {
    const before = await outsideFiles(box);
    const obs = await box.call("request_permissions", { reason: "x", write: [box.root] });
    equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
    const listed = await box.call("bash", { command: `ls -A ${box.ternHome}; echo end` });
    ok(
      listed.status === "SUCCEEDED" && !listed.output.includes("config.jsonc"),
      JSON.stringify(listed),
    );
    const config = join(box.ternHome, "config.jsonc");
    const wrote = await box.call("bash", {
      command: `echo pwned > ${config}; echo x > ${box.ternHome}/trust.json`,
    });
    ok(
      wrote.status === "SUCCEEDED" && /Read-only file system/.test(wrote.output),
      JSON.stringify(wrote),
    );
    await box.call("write", { path: config, content: "pwned" });
    await box.call("bash", { command: `ln -s ${box.ternHome} ${box.ws}/t` });
    await box.call("write", { path: "t/config.jsonc", content: "pwned" });
    // The grant itself works: a file in the home folder can be written.
    const made = await box.call("bash", { command: `echo ok > ${box.root}/made.txt` });
    ok(made.status === "SUCCEEDED" && made.output.includes("exit code: 0"), JSON.stringify(made));
    deepEqual(await outsideFiles(box), before);
  });
});

Deno.test("PermissionGate.restore() in bypass mode drops a restored grant with a notice", async () => {
  await withGate({ mode: "bypass" }, async (box) => {
    await box.gate.restore([grant({ read: [box.outside] })]);
    equal((await box.call("list", { path: "." })).status, "SUCCEEDED");
    ok(!readRoots(box).includes(box.outside), "the grant came back silently");
    const notice = box.events.find((e) => e.type === "permission_decision");
    ok(notice?.type === "permission_decision" && notice.callId === "restore-1" && !notice.allow);
    match(notice.reason, /--mode bypass grants nothing/);
    expectError(
      await box.call("read", { path: join(box.outside, "secret.txt") }),
      "POLICY_DENIED",
      /outside the workspace/,
    );
  });
});

Deno.test("PermissionGate.restore() in auto mode restores only narrow grants, through the reviewer", async () => {
  await withGate({ mode: "auto", reviewer: allowAll }, async (box) => {
    await box.gate.restore([
      grant({ read: [box.outside] }),
      grant({ write: [box.outside] }),
      grant({ keys: ["bash:docker ps"], withoutSandbox: true }),
    ]);
    equal((await box.call("list", { path: "." })).status, "SUCCEEDED");
    equal(box.reviewed.length, 1, box.reviewed.join("\n"));
    match(box.reviewed[0], /^restored from the session: read /);
    ok(readRoots(box).includes(box.outside));
    deepEqual(box.runtime.profile.grants.write, [box.ws, box.runtime.explain().tmp]);
    const decisions = box.events.filter((e) => e.type === "permission_decision");
    deepEqual(decisions.map((e) => e.type === "permission_decision" && e.allow), [
      true,
      false,
      false,
    ]);
  });
});

Deno.test("request_permissions: a grant that cannot be applied changes nothing", async () => {
  const changes: PermissionChange[] = [];
  await withGate({ answers: ["once", "deny", "once"], changes }, async (box) => {
    const odd = join(box.outside, "a,b");
    await Deno.mkdir(odd);
    const grants = grantsOf(box);
    const obs = await box.call("request_permissions", {
      reason: "x",
      read: [odd],
      commands: ["touch marker"],
      scope: "session",
    });
    expectError(
      obs,
      "POLICY_DENIED",
      /could not be applied, so nothing changed.*Deno's permission flags/s,
    );
    equal(grantsOf(box), grants);
    deepEqual(changes, [], "a grant that failed was recorded for the session");
    // The command prefix was not remembered either: the command is asked (and denied).
    expectError(await box.call("bash", { command: "touch marker" }), "POLICY_DENIED", /denied/);
    // And the gate still works: a later grant applies.
    const later = await box.call("request_permissions", { reason: "x", read: [box.outside] });
    equal(later.status, "SUCCEEDED", JSON.stringify(later));
    ok(readRoots(box).includes(box.outside));
  });
});

function grant(fields: {
  read?: string[];
  write?: string[];
  keys?: string[];
  withoutSandbox?: boolean;
}): PermissionChange {
  return {
    kind: "grant",
    extra: { read: fields.read ?? [], write: fields.write ?? [], net: [], env: [] },
    keys: fields.keys ?? [],
    withoutSandbox: fields.withoutSandbox ?? false,
  };
}

Deno.test("PermissionGate in auto mode: without bubblewrap the reviewer cannot let a command run", async () => {
  await withGate(
    { mode: "auto", reviewer: allowAll, bwrapPath: "/nonexistent/bwrap" },
    async (box) => {
      const obs = await box.call("bash", { command: `echo pwned > ${box.outside}/secret.txt` });
      expectError(obs, "POLICY_DENIED", /needs a person \(the reviewer may not allow it\)/);
      deepEqual(box.reviewed, []);
      equal(await Deno.readTextFile(join(box.outside, "secret.txt")), "outside content\n");
    },
  );
  const options = { mode: "auto" as const, reviewer: allowAll, answers: ["deny" as const] };
  await withGate({ ...options, bwrapPath: "/nonexistent/bwrap" }, async (box) => {
    const obs = await box.call("bash", { command: "echo hi" });
    expectError(obs, "POLICY_DENIED", /The user denied it/);
    deepEqual(box.reviewed, []);
    equal(box.asked.length, 1);
  });
});

Deno.test("PermissionGate.requestGrant(): a worker that cannot start with the grant changes nothing", async () => {
  const changes: PermissionChange[] = [];
  await withGate({ answers: ["once"], changes }, async (box) => {
    const grants = grantsOf(box);
    const outcome = await box.gate.requestGrant(
      { read: [], write: [], net: ["bad host"], env: [], commands: [], withoutSandbox: false },
      {
        scope: "session",
        reason: "x",
        summary: "network bad host",
        callId: "g1",
        signal: new AbortController().signal,
      },
    );
    equal(outcome.allow, false);
    match(outcome.reason, /could not be applied, so nothing changed.*tool worker/s);
    equal(grantsOf(box), grants);
    deepEqual(changes, []);
    equal(box.runtime.explain().bwrap?.includes("--share-net"), false);
    // The worker still runs the calls the profile allows.
    equal((await box.call("list", { path: "." })).status, "SUCCEEDED");
  });
});

Deno.test("request_permissions refuses hosts that are not host or host:port", async () => {
  await withGate({ answers: ["once"] }, async (box) => {
    for (const host of ["*", "http://example.com", "a b", "example.com:99999", "example.com/x"]) {
      const obs = await box.call("request_permissions", { reason: "x", hosts: [host] });
      expectError(obs, "INVALID_ARGUMENTS", /host:port/);
    }
    deepEqual(box.asked, []);
  });
});

Deno.test("PermissionGate.restore(): calls made at once wait for the one decision on restored grants", async () => {
  // A reviewer that takes its time: a call that did not wait would run before the grant.
  const slow: Reviewer = () =>
    new Promise((resolve) => setTimeout(() => resolve({ decision: "allow", reason: "ok" }), 300));
  await withGate({ mode: "auto", reviewer: slow }, async (box) => {
    await box.gate.restore([grant({ read: [box.outside] })]);
    const path = join(box.outside, "secret.txt");
    const [a, b] = await Promise.all([box.call("read", { path }), box.call("read", { path })]);
    equal(a.status, "SUCCEEDED", JSON.stringify(a));
    equal(b.status, "SUCCEEDED", JSON.stringify(b));
    equal(box.reviewed.length, 1);
  });
});

Deno.test("request_permissions in auto mode with autoNetwork never or person (a subagent of a BYPASS or ASK run): the reviewer grants nothing", async () => {
  // A reviewer that allows everything must not take a child further than its parent could go.
  await withGate({ mode: "auto", autoNetwork: "never", reviewer: allowAll }, async (box) => {
    const obs = await box.call("request_permissions", { reason: "x", read: [box.outside] });
    expectError(obs, "POLICY_DENIED", /grants nothing beyond the sandbox profile/);
    deepEqual([box.reviewed, box.asked], [[], []]);
    ok(!readRoots(box).includes(box.outside));
  });
  await withGate(
    { mode: "auto", autoNetwork: "person", reviewer: allowAll, answers: ["deny"] },
    async (box) => {
      const obs = await box.call("request_permissions", { reason: "x", read: [box.outside] });
      expectError(obs, "POLICY_DENIED", /The user denied it/);
      deepEqual(box.reviewed, []);
      equal(box.asked.length, 1);
    },
  );
  await withGate({ mode: "auto", autoNetwork: "person", reviewer: allowAll }, async (box) => {
    // Nobody to ask: denied, never the reviewer's.
    const obs = await box.call("request_permissions", { reason: "x", read: [box.outside] });
    expectError(obs, "POLICY_DENIED", /not interactive/);
    deepEqual(box.reviewed, []);
  });
});
