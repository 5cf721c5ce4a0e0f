/**
 * How a plan node's worker says its step cannot be done: the `fail_step` tool (given to plan
 * nodes only), or an answer that starts with `FAILED:`. Either makes the node FAILED (and its
 * dependents BLOCKED) instead of SUCCEEDED, as the plan's state machine has it: RUNNING → FAILED
 * on "worker / tool / error / limit".
 */
import * as z from "../core/zod.ts";
import { defineTool, type Tool } from "../tools/define.ts";

/** The tool's name, as the model sees it. */
export const FAIL_STEP_TOOL = "fail_step";

const parameters = z.strictObject({
  reason: z.string().trim().min(1).describe("Why this step cannot be done, for the person"),
});

/** A node's failure report: the tool to give its worker, and what it reported. */
export interface FailStep {
  tool: Tool;
  /** The reason given to the tool, once it was called. */
  readonly reason: string | undefined;
}

/** A fresh `fail_step` tool for one node's worker. Calling it changes nothing outside. */
export function createFailStep(): FailStep {
  let reason: string | undefined;
  const tool = defineTool({
    name: FAIL_STEP_TOOL,
    description: "Report that your plan step cannot be done (the step is marked FAILED and the " +
      "steps depending on it do not run). Call it instead of pretending the step succeeded, " +
      "then stop.",
    parameters,
    readOnly: true,
    runsIn: "host",
    paths: () => [],
    execute(args) {
      reason = args.reason;
      return Promise.resolve({
        output: "Recorded: this step is FAILED. Stop now with a one-line summary.",
      });
    },
  });
  return {
    tool,
    get reason() {
      return reason;
    },
  };
}

/** The prefix of an answer that reports the step as failed. */
const FAILED_PREFIX = /^\s*FAILED:\s*/;

/**
 * Whether a node's worker reported failure, and why: `fail_step` was called, or its answer
 * starts with `FAILED:`. Undefined when it did not.
 */
export function reportedFailure(failStep: FailStep, answer: string): string | undefined {
  if (failStep.reason !== undefined) return failStep.reason;
  if (FAILED_PREFIX.test(answer)) return answer.replace(FAILED_PREFIX, "").trim() || "FAILED";
  return undefined;
}
