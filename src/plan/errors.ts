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

/** The most problems a {@linkcode PlanValidationError} lists; the rest are counted. */
export const MAX_PLAN_PROBLEMS = 10;

/**
 * The graph is not valid; `problems` lists the problems found, each naming the ids involved: the
 * first {@linkcode MAX_PLAN_PROBLEMS}, then how many more (a graph the model wrote may have
 * thousands, and they are shown and sent back to it).
 */
export class PlanValidationError extends TernError {
  override name = "PlanValidationError";
  /** One line per problem, e.g. `"b" depends on unknown "x"` or `cycle: a → b → a`. */
  readonly problems: string[];

  constructor(problems: string[]) {
    const more = problems.length - MAX_PLAN_PROBLEMS;
    const listed = more > 0
      ? [...problems.slice(0, MAX_PLAN_PROBLEMS), `and ${more} more problem${more > 1 ? "s" : ""}`]
      : problems;
    super(`Invalid plan: ${listed.join("; ")}`);
    this.problems = listed;
  }
}
