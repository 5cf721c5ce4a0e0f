/**
 * Background process ids across a resume: a new tern run of a session goes on after the ids
 * its conversation names, so an old id never reaches a new process, and an old id says what
 * became of its process. Real processes (`bash`, no sandbox) under a real supervisor.
 */
import { equal, match, ok, rejects } from "node:assert/strict";
import { lastProcessNumber, ProcessSupervisor } from "../../src/sandbox/background.ts";
import { unsandboxedLaunch } from "../../src/sandbox/background_launch.ts";
import type { Message } from "../../src/core/messages.ts";

function supervisor(): ProcessSupervisor {
  const launch = (command: string, options: { cwd: string; port?: number; token: string }) =>
    Promise.resolve(
      unsandboxedLaunch({ PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" }, command, options),
    );
  return new ProcessSupervisor({ launch, launchUnsandboxed: launch, graceMs: 50 });
}

/** A resumed session's conversation: two processes started by the run before. */
const before: Message[] = [
  { role: "user", content: "start the dev servers" },
  {
    role: "assistant",
    content: "",
    toolCalls: [{ id: "c1", name: "bash", arguments: "{}" }],
  },
  { role: "tool", toolCallId: "c1", name: "bash", content: "Started p1\np1 running: sleep 100" },
  { role: "tool", toolCallId: "c2", name: "bash", content: "Started p2; it is ready\np2 ready" },
];

Deno.test("lastProcessNumber() finds the highest id tool results and summaries name", () => {
  equal(lastProcessNumber([]), 0);
  equal(lastProcessNumber(before), 2);
  equal(lastProcessNumber([{ role: "user", content: "Summary: p7 was the dev server" }]), 7);
  // The assistant's own words are not a record; a number too long for an id is not one.
  equal(lastProcessNumber([{ role: "assistant", content: "p9" }]), 0);
  equal(lastProcessNumber([{ role: "user", content: "p12345678901" }]), 0);
});

Deno.test("ProcessSupervisor.resumeAfter() goes on after the ids before a resume", async () => {
  const processes = supervisor();
  try {
    processes.resumeAfter(before);
    const control = processes.control(true);
    const started = await control.start("sleep 30", { cwd: Deno.cwd() });
    equal(started.id, "p3");
    // The model's p1 from before the resume reaches no process, and says why.
    await rejects(control.stop("p1"), (error: Error) => {
      equal(error.name, "RangeError");
      match(error.message, /"p1": it ended before this session was resumed/);
      return true;
    });
    equal(control.info("p3").state, "running");
  } finally {
    await processes.close();
  }
});

Deno.test("ProcessSupervisor.continueFrom() keeps what was given before the resume", async () => {
  const first = supervisor();
  first.resumeAfter(before);
  await first.control(true).start("sleep 30", { cwd: Deno.cwd() });
  await first.close();
  const second = supervisor();
  try {
    second.continueFrom(first.handOver());
    // The session's ids are its own now: asking again changes nothing.
    second.resumeAfter([...before, { role: "user", content: "p3" }]);
    const control = second.control(true);
    equal((await control.start("sleep 30", { cwd: Deno.cwd() })).id, "p4");
    await rejects(control.stop("p2"), /"p2": it ended before this session was resumed/);
    await rejects(control.stop("p3"), /"p3": it was stopped when its sandbox was closed/);
    await rejects(control.stop("p9"), /"p9": known are p4/);
    // The model's id is quoted on one line and cut, however long.
    await rejects(control.stop("p1\n".repeat(10_000)), (error: Error) => {
      ok(!error.message.includes("\n") && error.message.length < 300, error.message);
      return true;
    });
  } finally {
    await second.close();
  }
});
