/**
 * The interactive UI (in tmux) with a subagent: a message typed while wait_agent waits wakes
 * the wait without consuming the completion, which the next turn then gets once.
 */
import { equal, ok } from "node:assert/strict";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { loadSession } from "../../src/session/load.ts";
import { listSessions } from "../../src/session/paths.ts";
import { bwrapNeed, tmuxNeed } from "../support/needs.ts";
import { PLACEHOLDER, send, withTern } from "../support/tmux_run.ts";
import { allText, call, deliveries, firstUser, records, until } from "./_helpers.ts";

const isChild = (request: ModelRequest) => firstUser(request).startsWith("CHILD");
const shown = (request: ModelRequest) => allText(request).split("[subagent ").length - 1;

Deno.test({
  name: "wait_agent() ends when the person steers, and the completion waits for the next turn",
  ignore: !bwrapNeed.ok || !tmuxNeed.ok,
  fn: async () => {
    const release = Promise.withResolvers<void>();
    const beforeReply = async (request: ModelRequest) => {
      if (isChild(request)) await release.promise;
    };
    const script = (request: ModelRequest): ScriptedReply => {
      if (isChild(request)) return { text: "child result Q-3" };
      const text = allText(request);
      if (shown(request) > 0) return { text: "got the result" };
      if (text.includes("STEER now")) return { text: "noted the steer" };
      if (!text.includes("Started subagent")) {
        return call("spawn_agent", { task_name: "slow", message: "CHILD slow" }, "s1");
      }
      return call("wait_agent", {}, "w1");
    };
    let requests: ModelRequest[] = [];
    await withTern(script, { server: { chunkDelayMs: 0, beforeReply } }, async (run) => {
      requests = run.server.requests.map((r) => r.modelRequest);
      const seen = () => run.server.requests.map((r) => r.modelRequest);
      await send(run.tern, "go");
      // The parent asked past its spawn (the steering boundary after it is behind) and the
      // child is running: the message typed now reaches a wait that has begun or begins.
      await until(
        () => seen().some((r) => !isChild(r) && allText(r).includes("Started subagent")),
        "the parent's request after the spawn",
      );
      await until(() => seen().some(isChild), "the child's request");
      await send(run.tern, "STEER now");
      await until(() => seen().some((r) => allText(r).includes("The wait ended early")), "wake");
      await run.tern.waitForText("noted the steer");
      await run.tern.waitForText(PLACEHOLDER);
      release.resolve();
      const parentPath = async () =>
        (await listSessions(run.home)).find((s) => s.subagentOf === undefined)!.path;
      await until(async () => {
        const session = await loadSession(await parentPath());
        return records(session.entries, "completion").length === 1;
      }, "the completion in the mailbox");
      await send(run.tern, "next");
      await run.tern.waitForText("got the result");
      await run.tern.waitForText(PLACEHOLDER);
      const session = await loadSession(await parentPath());
      const [completion] = records(session.entries, "completion");
      equal(deliveries(session.entries, String(completion.runId)).length, 1);
      requests = seen();
    });
    const parents = requests.filter((r) => !isChild(r));
    const woken = parents.find((r) => allText(r).includes("The wait ended early"))!;
    equal(shown(woken), 0);
    ok(allText(woken).includes("STEER now"));
    equal(shown(parents.at(-1)!), 1);
  },
});

Deno.test({
  name: "wait_agent() ends with the turn on Esc, which stops the child; /agents shows its state",
  ignore: !bwrapNeed.ok || !tmuxNeed.ok,
  fn: async () => {
    const release = Promise.withResolvers<void>();
    const beforeReply = async (request: ModelRequest) => {
      if (isChild(request)) await release.promise;
    };
    const script = (request: ModelRequest): ScriptedReply => {
      if (isChild(request)) return { text: "child result E-5" };
      if (shown(request) > 0) return { text: "got the result" };
      if (!allText(request).includes("Started subagent")) {
        return call("spawn_agent", { task_name: "slow", message: "CHILD slow" }, "s1");
      }
      return call("wait_agent", {}, "w1");
    };
    await withTern(script, { server: { chunkDelayMs: 0, beforeReply } }, async (run) => {
      const seen = () => run.server.requests.map((r) => r.modelRequest);
      await send(run.tern, "go");
      await until(
        () => seen().some((r) => !isChild(r) && allText(r).includes("Started subagent")),
        "the parent's request after the spawn",
      );
      await until(() => seen().some(isChild), "the child's request");
      await run.tern.waitForText("wait_agent");
      // The TUI lists the running child with its state.
      await send(run.tern, "/agents");
      await run.tern.waitForText("running  (session");
      await run.tern.keys("Escape");
      await run.tern.waitForText(PLACEHOLDER);
      // The child was stopped with the turn ("Esc stops the agent"): its end is recorded, and
      // the next turn gets it once.
      release.resolve();
      const parentPath = async () =>
        (await listSessions(run.home)).find((s) => s.subagentOf === undefined)!.path;
      await until(async () => {
        const session = await loadSession(await parentPath());
        return records(session.entries, "completion").length === 1;
      }, "the completion in the mailbox");
      await send(run.tern, "next");
      await run.tern.waitForText("got the result");
      await run.tern.waitForText(PLACEHOLDER);
      await send(run.tern, "/agents");
      await run.tern.waitForText("cancelled, delivered");
      const session = await loadSession(await parentPath());
      const [completion] = records(session.entries, "completion");
      equal(completion.status, "cancelled");
      ok(
        String(completion.error).startsWith("stopped: the turn was cancelled"),
        String(completion.error),
      );
      equal(deliveries(session.entries, String(completion.runId)).length, 1);
      const parents = seen().filter((r) => !isChild(r));
      equal(shown(parents.at(-1)!), 1);
    });
  },
});
