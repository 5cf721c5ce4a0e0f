import { deepEqual, equal, match, ok } from "node:assert/strict";
import {
  type AskPerson,
  nonInteractiveDenial,
  review,
  type Reviewer,
  type ReviewerAnswer,
  type ReviewOptions,
  type ReviewRequest,
} from "../../src/sandbox/review.ts";
import { allowRulesCover, compileRules, coveringRuleCommands } from "../../src/sandbox/rules.ts";
import { analyzeShell } from "../../src/sandbox/shell/parse.ts";

const BASH: ReviewRequest = {
  tool: "bash",
  args: { command: "npm test --watch" },
  summary: "npm test --watch",
  command: true,
  allowCommands: ["npm test"],
  reason: 'runs-code: "npm test" runs project code',
  profile: ":workspace",
  rememberable: true,
};

const WRITE: ReviewRequest = {
  tool: "write",
  args: { path: "a.txt", content: "x" },
  summary: "write a.txt",
  reason: '"write" changes files',
  profile: ":workspace",
  rememberable: true,
};

function options(overrides: Partial<ReviewOptions>): ReviewOptions {
  return {
    mode: "ask",
    reviewTimeoutMs: 60_000,
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** A person who gives `answer` and records what they were shown. */
function person(answer: Awaited<ReturnType<AskPerson>>) {
  const seen: { request: ReviewRequest; signal: AbortSignal }[] = [];
  const ask: AskPerson = (request, signal) => {
    seen.push({ request, signal });
    return Promise.resolve(answer);
  };
  return { ask, seen };
}

/** A reviewer that answers `answer` at once and records its calls. */
function reviewer(answer: ReviewerAnswer) {
  const seen: ReviewRequest[] = [];
  const judge: Reviewer = (request) => {
    seen.push(request);
    return Promise.resolve(answer);
  };
  return { judge, seen };
}

/** A reviewer that never answers by itself: it rejects when its signal fires. */
function waitingReviewer() {
  const signals: AbortSignal[] = [];
  const judge: Reviewer = (_request, signal) => {
    signals.push(signal);
    return new Promise((_resolve, reject) => {
      signal.addEventListener("abort", () => reject(new Error("review aborted")), { once: true });
    });
  };
  return { judge, signals };
}

const failing: AskPerson = () => Promise.reject(new Error("must not be asked"));

Deno.test("review() in bypass mode allows without asking anyone", async () => {
  const judge: Reviewer = () => Promise.reject(new Error("must not be called"));
  deepEqual(await review(BASH, options({ mode: "bypass", person: failing, reviewer: judge })), {
    allow: true,
    by: "bypass",
    reason: "Review is bypassed",
    remember: false,
  });
});

Deno.test("review() in ask mode without a person denies, saying how to allow", async () => {
  const outcome = await review(BASH, options({ mode: "ask" }));
  deepEqual(outcome, {
    allow: false,
    by: "policy",
    reason: nonInteractiveDenial(BASH),
    remember: false,
  });
  match(outcome.reason, /--mode auto or --mode bypass/);
  ok(outcome.reason.includes('{"action": "allow", "command": "npm test"}'), outcome.reason);
  ok(outcome.reason.includes(BASH.reason), "names why it needed review");
});

Deno.test("nonInteractiveDenial() suggests a command rule for bash and a tool rule otherwise", () => {
  equal(
    nonInteractiveDenial(WRITE),
    'Not approved: this run is not interactive and review mode is "ask" ("write" changes ' +
      "files). To allow such calls, run with --mode auto or --mode bypass, or add the rule " +
      '{"action": "allow", "tool": "write"} to "rules" in ~/.tern/config.jsonc',
  );
  const both = nonInteractiveDenial({ ...BASH, allowCommands: ["echo hi", "cat a.txt"] });
  ok(
    both.includes(
      'add the rules {"action": "allow", "command": "echo hi"}, ' +
        '{"action": "allow", "command": "cat a.txt"} to "rules"',
    ),
    both,
  );
  const { allowCommands: _, ...opaque } = BASH;
  match(nonInteractiveDenial(opaque), /no allow rule can cover this command/);
});

Deno.test("coveringRuleCommands() names rules that, added, do cover the command", async () => {
  const cases: Array<[string, string[] | undefined]> = [
    ["echo hi 2>/dev/null; cat a.txt", ["echo hi", "cat a.txt"]],
    ['echo "hi there" && ./build.sh --fast', ["echo", "./build.sh --fast"]],
    // No allow rule covers output to a file or a variable not known to be harmless.
    ["echo hi >> a.txt; cat a.txt", undefined],
    ["FOO=1 npm test", undefined],
    ["npm test; npm test", ["npm test"]],
    ["sudo make install", undefined],
    ['eval "$X"', undefined],
    ["$TOOL run", undefined],
  ];
  for (const [command, expected] of cases) {
    const shell = await analyzeShell(command);
    const commands = coveringRuleCommands(shell);
    deepEqual(commands, expected, command);
    if (commands === undefined) continue;
    const rules = await compileRules(
      commands.map((words) => ({ action: "allow", command: words })),
    );
    ok(allowRulesCover(rules, shell), `${command}: the named rules cover it`);
  }
});

Deno.test("review() in ask mode maps the person's answers", async () => {
  const once = person("once");
  deepEqual(await review(BASH, options({ person: once.ask })), {
    allow: true,
    by: "person",
    reason: "The user allowed it",
    remember: false,
  });
  deepEqual(await review(BASH, options({ person: person("session").ask })), {
    allow: true,
    by: "person",
    reason: "The user allowed it for this session",
    remember: true,
  });
  deepEqual(await review(BASH, options({ person: person("deny").ask })), {
    allow: false,
    by: "person",
    reason: "The user denied it",
    remember: false,
  });
  equal(once.seen.length, 1);
  deepEqual(once.seen[0].request, BASH);
});

Deno.test("review() passes the caller's signal to the person", async () => {
  const controller = new AbortController();
  const asked = person("once");
  await review(WRITE, options({ person: asked.ask, signal: controller.signal }));
  equal(asked.seen[0].signal, controller.signal);
});

Deno.test("review() denies when the person gives no answer", async () => {
  const gone: AskPerson = () => Promise.reject(new Error("the terminal closed"));
  deepEqual(await review(BASH, options({ person: gone })), {
    allow: false,
    by: "person",
    reason: "No answer (the terminal closed)",
    remember: false,
  });
});

Deno.test("review() in auto mode follows the reviewer's allow with its reason", async () => {
  const { judge, seen } = reviewer({ decision: "allow", reason: "fits the goal" });
  deepEqual(await review(BASH, options({ mode: "auto", reviewer: judge, person: failing })), {
    allow: true,
    by: "reviewer",
    reason: "Reviewer: fits the goal",
    remember: false,
  });
  deepEqual(seen, [BASH]);
});

Deno.test("review() in auto mode follows the reviewer's deny without asking the person", async () => {
  const { judge } = reviewer({ decision: "deny", reason: "pushes to a remote" });
  deepEqual(await review(BASH, options({ mode: "auto", reviewer: judge, person: failing })), {
    allow: false,
    by: "reviewer",
    reason: "Reviewer: pushes to a remote",
    remember: false,
  });
});

Deno.test("review() in auto mode denies when the reviewer throws", async () => {
  const judge: Reviewer = () => Promise.reject(new Error("HTTP 500"));
  deepEqual(await review(BASH, options({ mode: "auto", reviewer: judge })), {
    allow: false,
    by: "reviewer",
    reason: "Denied: the reviewer failed (HTTP 500)",
    remember: false,
  });
});

Deno.test("review() in auto mode denies a decision that is not allow or deny", async () => {
  for (
    const garbage of [
      { decision: "maybe", reason: "unsure" },
      { decision: "ALLOW", reason: "x" },
      {},
      null,
      "allow",
    ]
  ) {
    const judge = (() => Promise.resolve(garbage)) as unknown as Reviewer;
    const outcome = await review(BASH, options({ mode: "auto", reviewer: judge }));
    equal(outcome.allow, false, JSON.stringify(garbage));
    equal(outcome.by, "reviewer");
    match(outcome.reason, /^Denied: /);
  }
});

Deno.test("review() in auto mode denies when the reviewer takes too long, and aborts it", async () => {
  const { judge, signals } = waitingReviewer();
  deepEqual(await review(BASH, options({ mode: "auto", reviewer: judge, reviewTimeoutMs: 50 })), {
    allow: false,
    by: "reviewer",
    reason: "Denied: the reviewer gave no answer within 50 ms",
    remember: false,
  });
  equal(signals.length, 1);
  equal(signals[0].aborted, true, "the reviewer's signal fired");
});

Deno.test("review() in auto mode ignores an allow that comes after the timeout", async () => {
  const late: Reviewer = (_request, signal) =>
    new Promise((resolve) => {
      signal.addEventListener("abort", () => resolve({ decision: "allow", reason: "late" }), {
        once: true,
      });
    });
  const outcome = await review(
    BASH,
    options({ mode: "auto", reviewer: late, reviewTimeoutMs: 50 }),
  );
  equal(outcome.allow, false);
  match(outcome.reason, /within 50 ms/);
});

Deno.test("review() in auto mode asks the person when the reviewer fails", async () => {
  const cases: Reviewer[] = [
    () => Promise.reject(new Error("boom")),
    (() => Promise.resolve({ decision: "maybe", reason: "?" })) as unknown as Reviewer,
    waitingReviewer().judge,
  ];
  for (const judge of cases) {
    const asked = person("session");
    const outcome = await review(
      BASH,
      options({ mode: "auto", reviewer: judge, person: asked.ask, reviewTimeoutMs: 50 }),
    );
    deepEqual(outcome, {
      allow: true,
      by: "person",
      reason: "The user allowed it for this session",
      remember: true,
    });
    equal(asked.seen.length, 1);
  }
});

Deno.test("review() in auto mode without a reviewer denies, or asks the person", async () => {
  const denied = await review(WRITE, options({ mode: "auto" }));
  equal(denied.allow, false);
  equal(denied.reason, "Denied: no reviewer is configured for auto mode");
  const asked = person("deny");
  const outcome = await review(WRITE, options({ mode: "auto", person: asked.ask }));
  equal(outcome.by, "person");
  equal(asked.seen.length, 1);
});

Deno.test("review() in auto mode denies when the caller's signal was already aborted", async () => {
  const controller = new AbortController();
  controller.abort();
  const { judge, seen } = reviewer({ decision: "allow", reason: "looks fine" });
  const outcome = await review(
    BASH,
    options({ mode: "auto", reviewer: judge, person: failing, signal: controller.signal }),
  );
  deepEqual(outcome, {
    allow: false,
    by: "reviewer",
    reason: "Denied: the review was interrupted",
    remember: false,
  });
  equal(seen.length, 0, "the reviewer is not asked");
});

Deno.test("review() in auto mode denies when the caller aborts during the review", async () => {
  const controller = new AbortController();
  const signals: AbortSignal[] = [];
  // Answers "allow" only once its signal fired: too late to count.
  const judge: Reviewer = (_request, signal) => {
    signals.push(signal);
    queueMicrotask(() => controller.abort());
    return new Promise((resolve) => {
      signal.addEventListener("abort", () => resolve({ decision: "allow", reason: "ok" }), {
        once: true,
      });
    });
  };
  deepEqual(
    await review(
      BASH,
      options({ mode: "auto", reviewer: judge, person: failing, signal: controller.signal }),
    ),
    { allow: false, by: "reviewer", reason: "Denied: the review was interrupted", remember: false },
  );
  equal(signals[0].aborted, true);
});

Deno.test("review() sends a person's reason for a denial on as the outcome's reason", async () => {
  const ask: AskPerson = () => Promise.resolve({ deny: "  use npm run test:once instead " });
  deepEqual(await review(BASH, options({ person: ask })), {
    allow: false,
    by: "person",
    reason: "The user denied it, saying: use npm run test:once instead",
    remember: false,
  });
  const blank: AskPerson = () => Promise.resolve({ deny: " " });
  equal((await review(BASH, options({ person: blank }))).reason, "The user denied it");
  equal((await review(BASH, options({ person: blank }))).allow, false);
});
