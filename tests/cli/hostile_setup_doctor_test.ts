/**
 * `tern doctor` tells the truth about what runs sandboxed: with the sandbox turned off, no line
 * says commands run sandboxed or that the worker is confined.
 */
import { doesNotMatch, match } from "node:assert/strict";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

testWith(
  [bwrapNeed],
  "tern doctor claims no sandbox where the configuration turns it off",
  async () => {
    const ws = await tempWorkspace();
    try {
      const env = { TERN_HOME: ws.home, HOME: ws.home };
      for (const args of [["--no-sandbox"], ["--profile", ":danger-full-access"]]) {
        const { stdout } = await runTern(["doctor", ...args], { cwd: ws.dir, env });
        const where = `${args.join(" ")}:\n${stdout}`;
        match(stdout, /^ok {3}bubblewrap +\S+: a trial sandbox started here$/m, where);
        doesNotMatch(stdout, /run sandboxed|confined/, where);
        match(stdout, /^ok {3}worker +the worker listed the workspace .*full access/m, where);
        match(stdout, /^ok {3}shell +ran .*without (bubblewrap|a sandbox)/m, where);
      }
      // Sandboxed, the worker is confined and the command ran in bubblewrap.
      const { stdout } = await runTern(["doctor"], { cwd: ws.dir, env });
      match(stdout, /^ok {3}worker +a confined worker listed the workspace/m, stdout);
      match(stdout, /^ok {3}shell +a command ran in bubblewrap$/m, stdout);
    } finally {
      await ws.cleanup();
    }
  },
);
