/**
 * For checkpoint tests: a stand-in writing tool (a "bash" that runs a function on the host), and
 * the real TurnCheckpoints of a session that fails the test on any warning.
 */
import type { PermissionRule } from "../../src/config/schema.ts";
import { TurnCheckpoints } from "../../src/harness/rewind/turn_checkpoints.ts";
import type { Session } from "../../src/session/session.ts";
import type { Tool } from "../../src/tools/define.ts";

/** A "bash" tool (not read-only, run on the host) whose every call runs `body`. */
export function hostTool(body: () => void): Tool {
  return {
    name: "bash",
    description: "",
    readOnly: false,
    runsIn: "host",
    parameters: {},
    paths: () => Promise.resolve([]),
    run: () => {
      body();
      return Promise.resolve({ status: "OK", output: "" });
    },
  } as unknown as Tool;
}

/** The checkpoints of `session` over `workspace` under `rules()`; a warning fails the test. */
export function strictCheckpoints(
  session: Session,
  workspace: string,
  rules: () => readonly PermissionRule[] = () => [],
): TurnCheckpoints {
  return new TurnCheckpoints({
    sessionPath: session.path,
    sessionId: session.id,
    workspace,
    warn: (text) => {
      throw new Error(text);
    },
    rules,
  });
}
