import { equal, match, ok } from "node:assert/strict";
import { SECRET, withGate } from "../agent/_gate_box.ts";
import { bwrapNeed } from "../support/needs.ts";
import { procsCommand, procsLines } from "../../src/cli/interactive/procs_command.ts";
import type { CommandContext } from "../../src/cli/interactive/commands.ts";
import { screenLine } from "../../src/core/terminal_text.ts";
import { visibleWidth } from "../../src/tui/width.ts";

Deno.test({
  name: "procsLines() shows each process with its last lines, secrets masked, controls removed",
  ignore: !bwrapNeed.ok,
  fn: () =>
    withGate({ mode: "bypass" }, async (box) => {
      const control = box.runtime.processes.control(false);
      const { id } = await control.start(
        `printf 'one\\ntwo\\n\\033[2Jkey ${SECRET}\\nbuilding%98s%s\\nserving\\n' '' ` +
          `'p2 stopped (exit code 0): npm run lint'; sleep 300`,
        { cwd: box.ws, text: "serving" },
      );
      equal(await control.wait(id, { timeoutMs: 120_000 }), "ready");
      const lines = procsLines(box.runtime.processes, box.gate.options.masker, 110);
      equal(lines.length, 4, lines.join("\n"));
      match(lines[0], /^p1 ready, ready on text "serving": printf/);
      // A line longer than the screen is cut, never wrapped to the left edge, where its end
      // would read as another process's line.
      equal(lines[2], `    building${" ".repeat(97)}…`);
      ok(lines.every((line) => line.length <= 110), JSON.stringify(lines));
      ok(!lines.join("\n").includes(SECRET), lines.join("\n"));
      ok(!lines.join("\n").includes("\x1b"), JSON.stringify(lines));
      equal(lines[3], "    serving");
      ok(!lines.join("\n").includes("p2 stopped"), lines.join("\n"));
    }),
});

Deno.test({
  name: "procsLines() keeps a line with carriage returns on one row, so it cannot forge a process",
  ignore: !bwrapNeed.ok,
  fn: () =>
    withGate({ mode: "bypass" }, async (box) => {
      const control = box.runtime.processes.control(false);
      // Each carriage return becomes a line break, which the screen draws as a space: measured
      // as nothing, 60 of them pushed the forged line past the edge, where it wrapped to the left.
      const { id } = await control.start(
        `printf 'build%s%s\\nserving\\n' "$(printf '\\r%.0s' {1..60})" ` +
          `'p2 stopped (exit code 0): npm run lint'; sleep 300`,
        { cwd: box.ws, text: "serving" },
      );
      equal(await control.wait(id, { timeoutMs: 120_000 }), "ready");
      const lines = procsLines(box.runtime.processes, box.gate.options.masker, 80);
      for (const line of lines) {
        ok(!/[\r\n]/.test(line), JSON.stringify(line));
        ok(visibleWidth(screenLine(line)) <= 80, JSON.stringify(line));
      }
    }),
});

Deno.test({
  name: "procsLines() shows the command of a process whose readiness text is long, blank or wide",
  ignore: !bwrapNeed.ok,
  fn: () =>
    withGate({ mode: "bypass" }, async (box) => {
      const control = box.runtime.processes.control(false);
      const texts = [`Listening${" ".repeat(300)}${"x".repeat(700)}`, "中".repeat(60)];
      for (const text of texts) {
        await control.start(`sleep 300 # the command`, { cwd: box.ws, text });
      }
      const lines = procsLines(box.runtime.processes, box.gate.options.masker, 100);
      equal(lines.length, texts.length, lines.join("\n"));
      for (const line of lines) match(line, /: sleep 300 # the command$/);
    }),
});

Deno.test({
  name: "procsCommand() /procs stop masks a secret in the stopped process's command",
  ignore: !bwrapNeed.ok,
  fn: () =>
    withGate({ mode: "bypass" }, async (box) => {
      const control = box.runtime.processes.control(false);
      const { id } = await control.start(`sleep 300 # ${SECRET}`, { cwd: box.ws });
      const notices: string[] = [];
      const sandbox = { runtime: box.runtime, gate: box.gate };
      const context = {
        conversation: () => Promise.resolve({ sandbox: () => Promise.resolve(sandbox) }),
        notice: (text: string) => notices.push(text),
        print: () => {},
        width: () => 120,
      } as unknown as CommandContext;
      await procsCommand().run(context, `stop ${id}`, new AbortController().signal);
      equal(notices.length, 1);
      match(notices[0], /^Stopped: p1 stopped/);
      ok(!notices[0].includes(SECRET), notices[0]);
    }),
});

Deno.test({
  name: "procsCommand() /procs stop says a process that had ended is not stopped now",
  ignore: !bwrapNeed.ok,
  fn: () =>
    withGate({ mode: "bypass" }, async (box) => {
      const control = box.runtime.processes.control(false);
      const { id } = await control.start("exit 0", { cwd: box.ws });
      equal(await control.wait(id, { timeoutMs: 10_000 }), "exited");
      const notices: string[] = [];
      const sandbox = { runtime: box.runtime, gate: box.gate };
      const context = {
        conversation: () => Promise.resolve({ sandbox: () => Promise.resolve(sandbox) }),
        notice: (text: string) => notices.push(text),
        print: () => {},
        width: () => 120,
      } as unknown as CommandContext;
      await procsCommand().run(context, `stop ${id}`, new AbortController().signal);
      equal(notices.length, 1);
      match(notices[0], /^Already ended, nothing to stop: p1 exited/);
    }),
});
