/** End-to-end: `tern rpc` as a subprocess, driven over JSON lines, against the scripted server. */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { parseRpcLine } from "../../src/cli/rpc/protocol.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { type LineProcess, spawnLineProcess } from "../support/line_process.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { type RecordedRequest, startScriptedServer } from "../support/scripted_server.ts";
import { tempWorkspace } from "../support/tern_process.ts";

type Line = Record<string, unknown>;

/** Starts a server, a workspace and `tern rpc`; runs `body`; checks stdout held only JSON. */
async function withRpc(
  script: ScriptedReply[] | ((request: ModelRequest, index: number) => ScriptedReply),
  body: (bench: {
    rpc: LineProcess;
    dir: string;
    requests: RecordedRequest[];
    requested: (count: number) => Promise<void>;
  }) => Promise<void>,
  options: { args?: string[]; env?: Record<string, string> } = {},
): Promise<{ code: number; stderr: string; lines: Line[] }> {
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  const server = await startScriptedServer(script as ScriptedReply[], {
    chunkDelayMs: 0,
    onRequest: () => {
      for (const wait of waiting) if (server.requests.length >= wait.count) wait.resolve();
    },
  });
  const ws = await tempWorkspace();
  const rpc = spawnLineProcess(
    ["rpc", "--base-url", server.baseUrl, "-m", "scripted", ...(options.args ?? [])],
    {
      cwd: ws.dir,
      env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test", ...options.env },
    },
  );
  let finished = false;
  try {
    await rpc.waitFor((line) => line.type === "ready");
    await body({
      rpc,
      dir: ws.dir,
      requests: server.requests,
      requested: (count) => {
        if (server.requests.length >= count) return Promise.resolve();
        const { promise, resolve } = Promise.withResolvers<void>();
        waiting.push({ count, resolve });
        return promise;
      },
    });
    const result = await rpc.finish();
    finished = true;
    deepEqual(rpc.invalid, [], "stdout holds only JSON lines");
    return { ...result, lines: rpc.lines };
  } finally {
    if (!finished) await rpc.kill();
    await server.close();
    await ws.cleanup();
  }
}

/** The response to command `id`. */
function responseTo(rpc: LineProcess, id: string | number): Promise<Line> {
  return rpc.waitFor((line) => line.type === "response" && line.id === id);
}

function events(lines: Line[]): Array<Record<string, unknown>> {
  return lines.filter((line) => line.type === "event").map((line) =>
    line.event as Record<string, unknown>
  );
}

Deno.test("tern rpc says its protocol version first and runs a prompt with a tool call", async () => {
  const { code, lines } = await withRpc([
    { toolCalls: [{ id: "c0", name: "read", arguments: JSON.stringify({ path: "a.txt" }) }] },
    { text: "The file says hello." },
  ], async ({ rpc, dir }) => {
    await Deno.writeTextFile(join(dir, "a.txt"), "hello\n");
    await rpc.send({ type: "prompt", id: 1, message: "what does a.txt say?" });
    const done = await responseTo(rpc, 1);
    equal(done.ok, true, JSON.stringify(done));
    const data = done.data as Record<string, unknown>;
    equal(data.exitReason, "COMPLETED");
    equal(data.text, "The file says hello.");
    equal(data.toolCalls, 1);
  });
  equal(code, 0);
  const ready = lines[0];
  equal(ready.type, "ready");
  equal(ready.protocol, 1);
  ok((ready.commands as string[]).includes("set_model"));
  const seen = events(lines);
  equal(seen[0].type, "turn_start");
  const end = seen.find((event) => event.type === "tool_end")!;
  equal((end.observation as { status: string }).status, "SUCCEEDED");
  ok(seen.some((event) => event.type === "text_delta"));
  equal(seen.at(-1)!.type, "turn_end");
});

testWith(
  [bwrapNeed],
  "tern rpc asks the client for ASK approvals and takes a steering message at the next boundary",
  async () => {
    await withRpc((request, index) => {
      if (index === 0) {
        const args = JSON.stringify({ path: "notes.txt", content: "from the agent\n" });
        return { toolCalls: [{ id: "w0", name: "write", arguments: args }] };
      }
      const said = request.messages.map((message) => message.content).join("\n");
      return { text: said.includes("STEER-MARK") ? "steered" : "not steered" };
    }, async ({ rpc, dir }) => {
      await rpc.send({ type: "prompt", id: "p", message: "write notes" });
      const asked = await rpc.waitFor((line) => line.type === "permission_request");
      equal(asked.tool, "write");
      match(String(asked.summary), /notes\.txt/);
      // An unknown request id is refused by name; the real one still waits.
      await rpc.send({ type: "answer_permission", id: 2, requestId: "p999", answer: "once" });
      match(String((await responseTo(rpc, 2)).error), /Unknown permission request "p999"/);
      const state = await (async () => {
        await rpc.send({ type: "get_state", id: 3 });
        return (await responseTo(rpc, 3)).data as Record<string, unknown>;
      })();
      equal(state.running, true);
      deepEqual(state.pendingPermissions, [asked.requestId]);
      // What changes the session waits for the turn's end.
      await rpc.send({ type: "fork", id: 31 });
      match(String((await responseTo(rpc, 31)).error), /^Cannot fork while a turn runs/);
      await rpc.send({ type: "set_model", id: 32, model: "other" });
      match(String((await responseTo(rpc, 32)).error), /^Cannot set model while a turn runs/);
      await rpc.send({ type: "steer", id: 4, message: "STEER-MARK and be brief" });
      equal((await responseTo(rpc, 4)).ok, true);
      await rpc.send({
        type: "answer_permission",
        id: 5,
        requestId: asked.requestId,
        answer: "once",
      });
      equal((await responseTo(rpc, 5)).ok, true);
      const done = await responseTo(rpc, "p");
      equal((done.data as Record<string, unknown>).text, "steered");
      equal(await Deno.readTextFile(join(dir, "notes.txt")), "from the agent\n");
      ok(
        rpc.lines.some((line) => line.type === "event" && (line.event as Line).type === "steering"),
      );
    }, { args: ["--mode", "ask"] });
  },
);

Deno.test("tern rpc denies a request the client denies, and abort cancels a hanging turn", async () => {
  await withRpc((_request, index) => {
    if (index === 0) {
      const args = JSON.stringify({ path: "x.txt", content: "no\n" });
      return { toolCalls: [{ id: "w0", name: "write", arguments: args }] };
    }
    if (index === 1) return { text: "denied, fine" };
    return { fault: "hang" };
  }, async ({ rpc, dir, requested }) => {
    await rpc.send({ type: "prompt", id: 1, message: "write x" });
    const asked = await rpc.waitFor((line) => line.type === "permission_request");
    await rpc.send({ type: "answer_permission", requestId: asked.requestId, answer: "deny" });
    const first = await responseTo(rpc, 1);
    equal((first.data as Line).exitReason, "COMPLETED");
    equal(await Deno.stat(join(dir, "x.txt")).then(() => true, () => false), false);
    await rpc.send({ type: "prompt", id: 2, message: "hang" });
    await requested(3);
    // A second prompt while one runs is refused; the running one is not disturbed.
    await rpc.send({ type: "prompt", id: 3, message: "again" });
    match(String((await responseTo(rpc, 3)).error), /already running/);
    await rpc.send({ type: "abort", id: 4 });
    deepEqual((await responseTo(rpc, 4)).data, { aborted: true });
    const second = await responseTo(rpc, 2);
    equal((second.data as Line).exitReason, "CANCELLED");
    await rpc.send({ type: "abort", id: 5 });
    deepEqual((await responseTo(rpc, 5)).data, { aborted: false });
  }, { args: ["--mode", "ask"] });
});

Deno.test("tern rpc get_state, list_sessions, fork and set_model act on the session", async () => {
  await withRpc((request) => ({ text: `model ${request.model}` }), async ({ rpc, requests }) => {
    await rpc.send({ type: "prompt", id: 1, message: "hello" });
    equal(((await responseTo(rpc, 1)).data as Line).text, "model scripted");
    await rpc.send({ type: "get_state", id: 2 });
    const state = (await responseTo(rpc, 2)).data as Line;
    equal(state.model, "scripted");
    equal(state.running, false);
    ok((state.entries as number) >= 2);
    const first = state.session as string;

    await rpc.send({ type: "fork", id: 3 });
    const forked = (await responseTo(rpc, 3)).data as Line;
    equal(forked.parent, first);
    ok(forked.session !== first);
    await rpc.send({ type: "get_state", id: 4 });
    equal(((await responseTo(rpc, 4)).data as Line).session, forked.session);

    await rpc.send({ type: "list_sessions", id: 5 });
    const listed = ((await responseTo(rpc, 5)).data as { sessions: Line[] }).sessions;
    const byId = new Map(listed.map((info) => [info.id, info]));
    ok(byId.has(first) && byId.has(forked.session as string), JSON.stringify(listed));
    equal(byId.get(forked.session as string)!.parentId, first);
    equal(byId.get(first)!.firstUserText, "hello");

    // A provider that cannot be used is refused, and nothing changes.
    await rpc.send({ type: "set_model", id: 60, model: "x", provider: "no-such-provider" });
    match(String((await responseTo(rpc, 60)).error), /no-such-provider/);
    await rpc.send({ type: "get_state", id: 61 });
    equal(((await responseTo(rpc, 61)).data as Line).model, "scripted");
    await rpc.send({ type: "set_model", id: 6, model: "other-model" });
    equal(((await responseTo(rpc, 6)).data as Line).model, "other-model");
    await rpc.send({ type: "prompt", id: 7, message: "again" });
    equal(((await responseTo(rpc, 7)).data as Line).text, "model other-model");
    equal(requests.at(-1)!.body.model, "other-model");
    // The fork holds the conversation so far: the new turn's request carries the first one.
    ok(JSON.stringify(requests.at(-1)!.body.messages).includes("hello"));
  });
});

Deno.test("tern rpc compact summarises the older part of the session", async () => {
  const padding = "lorem ipsum dolor sit amet ".repeat(900);
  await withRpc((request) => {
    if (request.tools.length === 0) {
      return {
        text: "## Goal\nSUMMARY-MARK\n## Evidence\nnone\n## Changes\nnone\n" +
          "## Decisions\nnone\n## Failed paths\nnone\n## Open items\nnone",
      };
    }
    return { text: "noted" };
  }, async ({ rpc, requests }) => {
    for (const id of [1, 2, 3, 4, 5, 6]) {
      await rpc.send({ type: "prompt", id, message: `part ${id}: ${padding}` });
      equal(((await responseTo(rpc, id)).data as Line).exitReason, "COMPLETED");
    }
    const before = requests.length;
    equal(before, 6, "no compaction during the turns");
    await rpc.send({ type: "compact", id: 9, focus: "the parts" });
    const compacted = await responseTo(rpc, 9);
    equal(compacted.ok, true, JSON.stringify(compacted));
    const data = compacted.data as Line;
    equal(data.compacted, true, JSON.stringify(data));
    ok((data.summarised as number) > 0);
    equal(requests.length, before + 1, "one summary request");
    ok(
      rpc.lines.some((line) => line.type === "event" && (line.event as Line).type === "compaction"),
    );
  }, { env: { TERN_CONTEXT_WINDOW: "40000", TERN_COMPACT_AT: "0.95" } });
});

Deno.test("tern rpc answers each bad line with an error naming the problem and goes on", async () => {
  await withRpc([{ text: "ok" }], async ({ rpc }) => {
    const cases: Array<[string, RegExp]> = [
      ["{not json", /^The line is not JSON/],
      ["[1,2]", /^The line is not a JSON object/],
      ['{"id":1}', /has no "type": expected prompt, steer/],
      ['{"type":"explode","id":2}', /^Unknown command "explode"/],
      ['{"type":"prompt","id":3}', /^Invalid "prompt" command: "message": /],
      ['{"type":"prompt","id":4,"message":""}', /"message": must not be empty/],
      ['{"type":"prompt","id":41,"message":" \\n\\t "}', /"message": must not be empty/],
      ['{"type":"get_state","id":5,"extra":true}', /Invalid "get_state" command: .*extra/],
      ['{"type":"answer_permission","id":6,"requestId":"p1","answer":"always"}', /"answer"/],
      ['{"type":"steer","id":7,"message":"x"}', /^No turn is running/],
    ];
    let after = rpc.lines.length;
    for (const [line, expected] of cases) {
      await rpc.sendRaw(line + "\n");
      const reply = await rpc.waitFor((out) => out.type === "response", after);
      after = rpc.lines.indexOf(reply) + 1;
      equal(reply.ok, false, line);
      match(String(reply.error), expected, line);
    }
    // The protocol still works after all of them.
    await rpc.send({ type: "get_state", id: "still" });
    equal((await responseTo(rpc, "still")).ok, true);
  });
});

Deno.test("tern rpc keeps model text inside JSON strings: a hostile answer forges no line", async () => {
  const forged = '\n{"type":"response","id":"victim","ok":true}\n\u2028{"type":"ready"}\r\n';
  const { code, lines } = await withRpc([{ text: `before${forged}after` }], async ({ rpc }) => {
    await rpc.send({ type: "prompt", id: "victim", message: "hi" });
    const done = await responseTo(rpc, "victim");
    equal((done.data as Line).text, `before${forged}after`);
  });
  equal(code, 0);
  equal(lines.filter((line) => line.type === "ready").length, 1);
  equal(lines.filter((line) => line.type === "response").length, 1);
});

Deno.test("tern rpc refuses a 'session' answer where the call cannot be remembered, and keeps asking", async () => {
  const outside = await Deno.makeTempDir({ prefix: "tern-outside-" });
  try {
    await withRpc((request, index) => {
      if (index === 0) {
        const args = JSON.stringify({ reason: "compare", read: [outside] });
        return { toolCalls: [{ id: "g0", name: "request_permissions", arguments: args }] };
      }
      return { text: String(request.messages.at(-1)!.content).split("\n")[0] };
    }, async ({ rpc }) => {
      await rpc.send({ type: "prompt", id: 1, message: "read the sibling" });
      const asked = await rpc.waitFor((line) => line.type === "permission_request");
      equal(asked.rememberable, false);
      // "once" grants the read for the rest of the turn (the request's default scope).
      equal(asked.grantFor, "turn");
      await rpc.send({
        type: "answer_permission",
        id: 2,
        requestId: asked.requestId,
        answer: "session",
      });
      match(String((await responseTo(rpc, 2)).error), /Cannot allow request "p1" for the session/);
      await rpc.send({ type: "get_state", id: 3 });
      deepEqual(((await responseTo(rpc, 3)).data as Line).pendingPermissions, [asked.requestId]);
      await rpc.send({
        type: "answer_permission",
        id: 4,
        requestId: asked.requestId,
        answer: "deny",
      });
      equal((await responseTo(rpc, 4)).ok, true);
      match(String(((await responseTo(rpc, 1)).data as Line).text), /POLICY_DENIED/);
    }, { args: ["--mode", "ask"] });
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("tern rpc denies what waits when stdin ends, lets the turn finish, and exits 0", async () => {
  let dir = "";
  const { code, lines } = await withRpc((_request, index) => {
    if (index === 0) {
      const args = JSON.stringify({ path: "late.txt", content: "x" });
      return { toolCalls: [{ id: "w0", name: "write", arguments: args }] };
    }
    return { text: "finished" };
  }, async ({ rpc, dir: workspace }) => {
    dir = workspace;
    await rpc.send({ type: "prompt", id: 1, message: "write late" });
    await rpc.waitFor((line) => line.type === "permission_request");
    // withRpc closes stdin now, with the request unanswered.
  }, { args: ["--mode", "ask"] });
  equal(code, 0);
  const done = lines.find((line) => line.type === "response" && line.id === 1)!;
  equal((done.data as Line).text, "finished");
  equal(await Deno.stat(join(dir, "late.txt")).then(() => true, () => false), false);
});

testWith(
  [bwrapNeed],
  "tern rpc rewind shows the plan, keeps a file changed outside tern, then applies",
  async () => {
    await withRpc([
      {
        toolCalls: [{
          id: "w0",
          name: "write",
          arguments: JSON.stringify({ path: "notes.txt", content: "from the agent\n" }),
        }],
      },
      { text: "written" },
    ], async ({ rpc, dir }) => {
      await Deno.writeTextFile(join(dir, "keep.txt"), "mine\n");
      await rpc.send({ type: "prompt", id: 1, message: "write notes" });
      equal((await responseTo(rpc, 1)).ok, true);
      await rpc.send({ type: "get_state", id: 2 });
      const state = (await responseTo(rpc, 2)).data as { sessionPath: string };
      const entries = (await Deno.readTextFile(state.sessionPath)).trim().split("\n").map((line) =>
        JSON.parse(line)
      );
      const user = entries.find((entry) =>
        entry.type === "message" && entry.message?.role === "user"
      );
      // The person edits the agent's file after the turn: a conflict.
      await Deno.writeTextFile(join(dir, "notes.txt"), "edited by the person\n");
      await rpc.send({ type: "rewind", id: 3, target: user.id });
      const plan = (await responseTo(rpc, 3)).data as Record<string, unknown>;
      equal(plan.applied, false);
      deepEqual(plan.conflicts, ["notes.txt"]);
      deepEqual(plan.changes, [{ path: "notes.txt", status: "deleted" }]);
      // What the rewind leaves as it is, named as `tern sessions rewind --json` names it.
      deepEqual([plan.skipped, plan.ignored, plan.unheld], [[], [], []]);
      match(plan.patch as string, /notes\.txt/);
      equal(await Deno.readTextFile(join(dir, "notes.txt")), "edited by the person\n");
      // Applying needs a choice for the conflict.
      await rpc.send({ type: "rewind", id: 4, target: user.id, apply: true });
      const refused = await responseTo(rpc, 4);
      equal(refused.ok, false);
      match(String(refused.error), /changed outside tern.*"keep" or "overwrite"/);
      await rpc.send({ type: "rewind", id: 5, target: user.id, apply: true, conflicts: "keep" });
      const kept = (await responseTo(rpc, 5)).data as Record<string, unknown>;
      equal(kept.applied, true);
      deepEqual(kept.kept, ["notes.txt"]);
      equal(await Deno.readTextFile(join(dir, "notes.txt")), "edited by the person\n");
      equal(await Deno.readTextFile(join(dir, "keep.txt")), "mine\n");
    }, { args: ["--mode", "bypass"] });
  },
);

testWith(
  [bwrapNeed],
  "tern rpc rewind before a session's grant ends it: its background process stops, the next command has no grant",
  async () => {
    const outside = await Deno.realPath(await Deno.makeTempDir());
    const call = (id: string, name: string, args: Record<string, unknown>): ScriptedReply => ({
      toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
    });
    const loop = `echo up; while :; do echo x >> ${outside}/bg.txt; sleep 0.05; done`;
    try {
      await withRpc([
        call("g0", "request_permissions", { reason: "logs", write: [outside], scope: "session" }),
        call("b0", "bash", { command: loop, run_in_background: true, ready_text: "up" }),
        { text: "started" },
        call("b1", "bash", { command: `echo fg > ${outside}/fg.txt` }),
        { text: "tried" },
      ], async ({ rpc }) => {
        const allow = async () => {
          const asked = await rpc.waitFor((line) =>
            line.type === "permission_request" && !answered.has(String(line.requestId))
          );
          answered.add(String(asked.requestId));
          await rpc.send({
            type: "answer_permission",
            id: `a${answered.size}`,
            requestId: asked.requestId,
            answer: "once",
          });
          return asked;
        };
        const answered = new Set<string>();
        await rpc.send({ type: "prompt", id: 1, message: "keep a log outside" });
        equal((await allow()).grantFor, "session");
        await allow();
        equal(((await responseTo(rpc, 1)).data as Line).text, "started");
        await rpc.send({ type: "get_state", id: 2 });
        const state = (await responseTo(rpc, 2)).data as { sessionPath: string };
        const entries = (await Deno.readTextFile(state.sessionPath)).trim().split("\n")
          .map((line) => JSON.parse(line));
        ok(entries.some((entry) => entry.type === "permission"));
        const user = entries.find((entry) =>
          entry.type === "message" && entry.message?.role === "user"
        );
        await rpc.send({
          type: "rewind",
          id: 3,
          target: user.id,
          restore: "conversation",
          apply: true,
        });
        equal(((await responseTo(rpc, 3)).data as Record<string, unknown>).applied, true);
        // The process started under the grant was stopped with it: the log grows no more.
        const size = async () => (await Deno.stat(join(outside, "bg.txt"))).size;
        const stopped = await size();
        ok(stopped > 0);
        await new Promise((resolve) => setTimeout(resolve, 400));
        equal(await size(), stopped);
        // The person allows the command, but the grant is not on the new path.
        await rpc.send({ type: "prompt", id: 4, message: "write outside" });
        await allow();
        equal(((await responseTo(rpc, 4)).data as Line).text, "tried");
        equal(await Deno.stat(join(outside, "fg.txt")).then(() => true, () => false), false);
      }, { args: ["--mode", "ask"] });
    } finally {
      await Deno.remove(outside, { recursive: true });
    }
  },
);

Deno.test("parseRpcLine() echoes only an id and a type a command may have", () => {
  const long = "i".repeat(201);
  const bad = parseRpcLine(JSON.stringify({ type: "prompt", id: long }));
  ok("error" in bad);
  equal(bad.id, undefined);
  equal(bad.type, "prompt");
  const unknown = parseRpcLine(JSON.stringify({ type: "x".repeat(100_000), id: 1.5 }));
  ok("error" in unknown);
  deepEqual([unknown.id, unknown.type], [undefined, undefined]);
  match(unknown.error, /^Unknown command "x{64}…": expected prompt/);
  ok(unknown.error.length < 300, `${unknown.error.length}`);
  const fine = parseRpcLine(JSON.stringify({ type: "nope", id: "i".repeat(200) }));
  ok("error" in fine);
  equal(fine.id, "i".repeat(200));
});

Deno.test("tern rpc set_model never sends another provider's key to the base URL given for one", async () => {
  const anthropicKey = "sk-ant-rpc-test-0123456789";
  await withRpc((request) => ({ text: `model ${request.model}` }), async ({ rpc, requests }) => {
    await rpc.send({ type: "set_model", id: 1, model: "claude-sonnet-4-5", provider: "anthropic" });
    match(String((await responseTo(rpc, 1)).error), /base URL .* was given for provider "openai"/);
    await rpc.send({ type: "prompt", id: 2, message: "hello" });
    equal(((await responseTo(rpc, 2)).data as Line).text, "model scripted");
    ok(requests.length > 0);
    ok(!JSON.stringify(requests.map((r) => r.headers)).includes(anthropicKey));
  }, { args: ["--provider", "openai"], env: { ANTHROPIC_API_KEY: anthropicKey } });
});

testWith(
  [bwrapNeed],
  "tern rpc goes on while the client does not read: a command's time limit still ends it",
  async () => {
    const command = { command: "yes progress", timeout_ms: 1_500 };
    const { code } = await withRpc([
      // Text enough to fill the pipe before the command starts.
      {
        text: "x".repeat(300_000),
        toolCalls: [{ id: "c0", name: "bash", arguments: JSON.stringify(command) }],
      },
      { text: "done" },
    ], async ({ rpc, requested }) => {
      rpc.pauseReading();
      await rpc.send({ id: 1, type: "prompt", message: "run it" });
      // The second request carries the timed-out command's result: the turn went on although
      // nothing tern wrote was read (a blocking write held every timer until the client read).
      const deadline = new Promise<"stuck">((resolve) => {
        const timer = setTimeout(() => resolve("stuck"), 60_000);
        requested(2).then(() => clearTimeout(timer));
      });
      equal(await Promise.race([requested(2).then(() => "went on" as const), deadline]), "went on");
      rpc.resumeReading();
      const done = await responseTo(rpc, 1);
      equal(done.ok, true);
      const ended = events(rpc.lines).find((event) => event.type === "tool_end");
      match(JSON.stringify(ended), /timed out after 1500 ms/);
    }, { args: ["--mode", "bypass"] });
    equal(code, 0);
  },
);
