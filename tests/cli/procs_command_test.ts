import { equal, match, ok } from "node:assert/strict";
import { SECRET, withGate } from "../agent/_gate_box.ts";
import { bwrapNeed } from "../support/needs.ts";
import { procsLines } from "../../src/cli/interactive/procs_command.ts";

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
