/** Errors of planning that reach the person: a rejected graph, a planner without an answer. */
import { TernError } from "../core/errors.ts";
import { emptyUsage, type Usage } from "../core/messages.ts";

/**
 * Planning gave no usable answer: the model's second answer was still rejected (`problems`
 * lists what was wrong with it), the model call failed (`problems` is empty), or it was
 * `cancelled`.
 */
export class PlanningError extends TernError {
  override name = "PlanningError";
  /** What was wrong with the model's last answer; empty when the model call itself failed. */
  readonly problems: string[];
  /** Tokens spent on the requests that completed. */
  readonly usage: Usage;
  /**
   * The signal fired before the model answered (the person stopped the run), or the person's
   * UserPromptSubmit hook blocked the task before anything was asked.
   */
  readonly cancelled: boolean;

  constructor(
    message: string,
    details: { problems?: string[]; usage?: Usage; cancelled?: boolean; cause?: unknown } = {},
  ) {
    super(message, "cause" in details ? { cause: details.cause } : {});
    this.problems = details.problems ?? [];
    this.usage = details.usage ?? emptyUsage();
    this.cancelled = details.cancelled ?? false;
  }
}

/** The graph is not valid; `problems` lists every problem found, each naming the ids involved. */
export class PlanValidationError extends TernError {
  override name = "PlanValidationError";
  /** One line per problem, e.g. `"b" depends on unknown "x"` or `cycle: a → b → a`. */
  readonly problems: string[];

  constructor(problems: string[]) {
    super(`Invalid plan: ${problems.join("; ")}`);
    this.problems = problems;
  }
}
