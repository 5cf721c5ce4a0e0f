/**
 * A key format can take in shell syntax: `token=a1|touch$IFS~/x` masks as one `secret`, a private
 * key's header hides every line after it. Whoever approves such a call sees the masked text, not
 * all that runs: the AUTO reviewer must never decide it, and a person is told first.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { reviewRequestFor } from "../../src/agent/call_facts.ts";
import { terminalQuestion } from "../../src/cli/ask_person.ts";
import {
  type AskPerson,
  HIDDEN_KEYS_DENIAL,
  review,
  type Reviewer,
  type ReviewRequest,
} from "../../src/sandbox/review.ts";
import { SecretMasker } from "../../src/sandbox/secrets.ts";
import { classifyShell } from "../../src/sandbox/shell/classify.ts";

const verdict = { action: "ask" as const, by: "classifier" as const, reason: "runs a program" };

async function requestFor(command: string): Promise<ReviewRequest> {
  const facts = { tool: "bash", readOnlyTool: false, shell: await classifyShell(command) };
  return reviewRequestFor("bash", { command }, facts, verdict, ":workspace", new SecretMasker());
}

const HIDING = [
  "echo token=abc123|touch$IFS/tmp/z30/pwned$IFS~/x",
  "echo '-----BEGIN PRIVATE KEY-----' >/dev/null\ntouch pwned-file",
];

Deno.test("reviewRequestFor() marks a call part of which the masker hid, and only such a call", async () => {
  for (const command of HIDING) {
    const request = await requestFor(command);
    equal(request.hiddenKeys, true, command);
    equal(request.summary.includes("touch"), false, request.summary);
  }
  for (const command of ["npm test", "echo token=getToken", "git commit -m 'fix token=…'"]) {
    equal((await requestFor(command)).hiddenKeys, undefined, command);
  }
});

Deno.test("review() in auto mode never lets the reviewer decide a call part of which is hidden", async () => {
  const judged: ReviewRequest[] = [];
  const reviewer: Reviewer = (request) => {
    judged.push(request);
    return Promise.resolve({ decision: "allow", reason: "looks fine" });
  };
  const base = { mode: "auto" as const, reviewer, reviewTimeoutMs: 60_000 };
  for (const command of HIDING) {
    const request = await requestFor(command);
    const signal = new AbortController().signal;
    deepEqual(await review(request, { ...base, signal }), {
      allow: false,
      by: "reviewer",
      reason: HIDDEN_KEYS_DENIAL,
      remember: false,
    });
    const asked: ReviewRequest[] = [];
    const person: AskPerson = (shown) => {
      asked.push(shown);
      return Promise.resolve("deny");
    };
    const outcome = await review(request, { ...base, signal, person });
    equal(outcome.allow, false);
    equal(outcome.by, "person");
    equal(asked.length, 1);
  }
  deepEqual(judged, []);
  // A call with nothing hidden still goes to the reviewer.
  await review(await requestFor("npm test"), { ...base, signal: new AbortController().signal });
  equal(judged.length, 1);
});

Deno.test("terminalQuestion() says first that part of the call is hidden as a key", async () => {
  const question = terminalQuestion(await requestFor(HIDING[0]), "", 100);
  const lines = question.split("\n");
  match(lines[2], /! Part of this call is hidden as a key/);
  ok(!terminalQuestion(await requestFor("npm test"), "", 100).includes("hidden as a key"));
});
