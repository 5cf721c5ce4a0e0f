/**
 * The question an ASK session's person answers before a subagent gets tools that change things
 * shows what the child will run with: the provider and model (which the parent's model may have
 * chosen), the thinking level, who reviews its calls, and the task the parent's model wrote,
 * masked, made visible and cut short. A denial with the person's words refuses it too.
 */
import { match, ok, rejects } from "node:assert/strict";
import { type ParentSettings, SubagentHost } from "../../src/harness/subagents/host.ts";
import type { AskPerson, PersonReply, ReviewRequest } from "../../src/sandbox/review.ts";
import type { Session } from "../../src/session/session.ts";

const KEY = "sk-test-SECRETKEY1234567890";

const SETTINGS: ParentSettings = {
  workspace: "/nowhere",
  ternHome: "/nowhere/home",
  model: "parent-model",
  provider: "parentco",
  thinking: "medium",
  profile: ":workspace",
  noSandbox: false,
  mode: "ask",
  autoNetwork: "person",
  autoAskRules: "person",
  maxRounds: 10,
  maxSubagents: 4,
  subagentTimeoutMs: 60_000,
  subagentEscalationTimeoutMs: 1_000,
  prestart: false,
};

/** The question asked for one spawn of `args`, answered `reply` (the spawn is refused). */
async function question(
  settings: Partial<ParentSettings>,
  args: { provider?: string; model?: string; thinking?: ParentSettings["thinking"] },
  reply: PersonReply = "deny",
): Promise<ReviewRequest> {
  let asked: ReviewRequest | undefined;
  const person: AskPerson = (request) => {
    asked = request;
    return Promise.resolve(reply);
  };
  const host = new SubagentHost({
    settings: () => ({ ...SETTINGS, ...settings }),
    session: () => ({}) as Session,
    goal: () => "",
    person,
    checkModel: () => Promise.resolve(),
    warn: () => {},
    mask: (text) => text.replaceAll(KEY, "[key]"),
  });
  await rejects(
    host.spawn({
      taskName: "fixer",
      message: `Fix it with ${KEY}\x1b[2J\nthen stop. ${"x".repeat(5_000)}`,
      tools: ["write"],
      signal: new AbortController().signal,
      ...args,
    }),
    /the person declined/,
  );
  return asked!;
}

Deno.test("SubagentHost.spawn() asks with the model, thinking, reviewer and task the child gets", async () => {
  const asked = await question({}, { provider: "otherco", model: "cheap-model", thinking: "high" });
  match(asked.summary, /"write"/);
  match(asked.summary, /model "cheap-model" of provider "otherco"/);
  match(asked.summary, /thinking high/);
  match(asked.summary, /reviewed by its own model "cheap-model"/);
  const task = asked.modelReason ?? "";
  match(task, /^Task: Fix it with \[key\]/);
  ok(!task.includes(KEY) && !JSON.stringify(asked).includes(KEY), task);
  // Made visible: no escape or line break reaches the terminal as such.
  ok(!task.includes("\x1b") && !task.includes("\n"), task);
  match(task, /more characters\)$/);
  ok(task.length < 1_200, `${task.length}`);
});

Deno.test("SubagentHost.spawn() names the person's reviewModel as the child's reviewer", async () => {
  const asked = await question({ reviewModel: "careful-model" }, {});
  match(asked.summary, /model "parent-model" of provider "parentco" thinking medium/);
  match(asked.summary, /reviewed by your reviewModel "careful-model"/);
});

Deno.test("SubagentHost.spawn() is refused by a denial that carries the person's words", async () => {
  await question({}, {}, { deny: "not this one" });
});
