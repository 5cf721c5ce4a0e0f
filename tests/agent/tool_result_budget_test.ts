import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { Observation } from "../../src/core/observation.ts";
import {
  applyToolResultBudget,
  fitRound,
  toolResultsDir,
} from "../../src/agent/tool_result_budget.ts";
import { estimateTokens } from "../../src/context/tokens.ts";

async function withDir(fn: (dir: string) => Promise<void>) {
  const root = await Deno.makeTempDir({ prefix: "tern-budget-" });
  try {
    await fn(join(root, "s", "tool-results"));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("applyToolResultBudget() passes a result within the limit through unchanged", async () => {
  await withDir(async (dir) => {
    const obs: Observation = { status: "SUCCEEDED", output: "small" };
    equal(await applyToolResultBudget(obs, "c1", { limit: 10, dir }), obs);
    equal(await Deno.stat(dir).catch(() => undefined), undefined, "nothing saved");
  });
});

Deno.test("applyToolResultBudget() saves a long result whole and previews its head and tail", async () => {
  await withDir(async (dir) => {
    const lines = Array.from({ length: 5000 }, (_, i) => `line ${i + 1}`);
    const output = lines.join("\n") + "\n";
    const obs: Observation = {
      status: "SUCCEEDED",
      output,
      details: { kind: "command", exitCode: 0, timedOut: false, truncated: false },
    };
    const shown = await applyToolResultBudget(obs, "call/../1", { limit: 2_000, dir });
    ok(shown.status === "SUCCEEDED");
    ok(shown.output.length < 2_500, String(shown.output.length));
    ok(shown.output.startsWith("line 1\nline 2\n"));
    ok(shown.output.includes("line 5000"), "the tail is in the preview");
    const path = /saved in "([^"]+)"/.exec(shown.output)?.[1] ?? "";
    ok(path.startsWith(dir + "/"), shown.output.slice(-300));
    ok(!path.slice(dir.length + 1).includes("/"), "the call id cannot make a path");
    ok(shown.output.includes("5000 lines"), "says how much there is");
    equal(await Deno.readTextFile(path), output);
    equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    equal(shown.details, obs.details);
  });
});

Deno.test("applyToolResultBudget() applies to a long error message too", async () => {
  await withDir(async (dir) => {
    const message = "Command timed out; output so far:\n" + "x".repeat(50_000);
    const shown = await applyToolResultBudget(
      { status: "ERROR", code: "TIMEOUT", message },
      "c2",
      { limit: 5_000, dir },
    );
    ok(shown.status === "ERROR" && shown.code === "TIMEOUT");
    ok(shown.message.startsWith("Command timed out"));
    ok(shown.message.length < 9_000);
  });
});

Deno.test("toolResultsDir() sits next to the session file", () => {
  equal(toolResultsDir("/h/sessions/w/2026_abc.jsonl"), "/h/sessions/w/2026_abc/tool-results");
});

Deno.test("fitRound() holds a round's results to the budget together, each saved whole", async () => {
  await withDir(async (dir) => {
    const small: Observation = { status: "SUCCEEDED", output: "ok" };
    const big = (i: number): Observation => ({
      status: "SUCCEEDED",
      output: `result ${i}\n${"word ".repeat(4_000)}\nend ${i}`,
    });
    const within = [{ callId: "a", observation: small }, { callId: "b", observation: big(1) }];
    const kept = await fitRound(within, { limitTokens: 100_000, dir });
    equal(kept[1], within[1].observation);
    const round = [
      { callId: "s", observation: small },
      ...Array.from({ length: 10 }, (_, i) => ({ callId: `c${i}`, observation: big(i) })),
    ];
    const fitted = await fitRound(round, { limitTokens: 5_000, dir });
    equal(fitted.length, 11);
    equal(fitted[0], small);
    const shown = fitted.map((o) => o.status === "SUCCEEDED" ? o.output : o.message);
    const total = shown.reduce((sum, text) => sum + estimateTokens(text), 0);
    ok(total <= 5_000 + 11 * 100, `${total}`);
    for (const [i, text] of shown.slice(1).entries()) {
      ok(text.startsWith(`result ${i}`), text.slice(0, 80));
      const path = /saved in "([^"]+)"/.exec(text)?.[1] ?? "";
      const original = round[i + 1].observation;
      equal(await Deno.readTextFile(path), original.status === "SUCCEEDED" ? original.output : "");
    }
  });
});

Deno.test("applyToolResultBudget() keeps a session's saved results within their bytes, removing the oldest, earlier runs' first", async () => {
  await withDir(async (dir) => {
    // An earlier run's two results, older than anything saved now.
    await Deno.mkdir(dir, { recursive: true });
    for (const name of ["old1.txt", "old2.txt"]) {
      await Deno.writeTextFile(join(dir, name), "o".repeat(10_000));
      await Deno.utime(join(dir, name), new Date(2020, 0, 1), new Date(2020, 0, 1));
    }
    const budget = { limit: 2_000, dir, maxSavedBytes: 35_000 };
    const paths: string[] = [];
    for (let i = 0; i < 5; i++) {
      const obs: Observation = { status: "SUCCEEDED", output: `${i}`.repeat(10_000) };
      const shown = await applyToolResultBudget(obs, `c${i}`, budget);
      ok(shown.status === "SUCCEEDED");
      paths.push(shown.output.match(/saved in "([^"]+)"/)![1]);
    }
    const left = [...Deno.readDirSync(dir)].map((entry) => join(dir, entry.name)).sort();
    // 35,000 bytes hold three results of 10,000: the newest three.
    equal(left.join("\n"), paths.slice(2).sort().join("\n"));
    equal(await Deno.readTextFile(paths[4]), "4".repeat(10_000));
  });
});

Deno.test("applyToolResultBudget() keeps the newest result even when it alone is over the folder's bytes", async () => {
  await withDir(async (dir) => {
    const obs: Observation = { status: "SUCCEEDED", output: "x".repeat(5_000) };
    const shown = await applyToolResultBudget(obs, "big", {
      limit: 2_000,
      dir,
      maxSavedBytes: 1_000,
    });
    ok(shown.status === "SUCCEEDED");
    const path = shown.output.match(/saved in "([^"]+)"/)![1];
    equal((await Deno.readTextFile(path)).length, 5_000);
  });
});
