/**
 * The question a person of an ASK session is asked before a subagent gets tools that change
 * things: what it gets, which model runs it (one the parent's model may have chosen), how hard
 * it thinks, who reviews its calls, and the task the parent's model wrote for it (the model's
 * words: masked, made visible and cut short).
 */
import { visibleText } from "../../core/terminal_text.ts";
import type { ReviewRequest } from "../../sandbox/review.ts";
import type { ParentSettings } from "./parent_settings.ts";

/** What a spawn hands over, as the child will run it. */
export interface Delegation {
  /** As shown (see host.ts shownTaskName). */
  taskName: string;
  message: string;
  tools: readonly string[];
  /** The tools among them that change things. */
  changing: readonly string[];
  provider?: string;
  model: string;
  thinking: string;
}

/** The longest stretch of the task's message the question quotes, in characters. */
export const TASK_CHARS = 1_000;

/** The person's question for `delegation`; every word of the model's goes through `mask`. */
export function delegationQuestion(
  delegation: Delegation,
  settings: ParentSettings,
  mask: (text: string) => string,
): ReviewRequest {
  const { taskName, provider, model, thinking } = delegation;
  const what = delegation.changing.map((name) => `"${mask(name)}"`).join(", ");
  const runs = provider === undefined
    ? `model "${mask(model)}"`
    : `model "${mask(model)}" of provider "${mask(provider)}"`;
  const task = cut(visibleText(mask(delegation.message)), TASK_CHARS);
  return {
    tool: "spawn_agent",
    args: {
      task_name: taskName,
      tools: delegation.tools.map(mask),
      ...(provider === undefined ? {} : { provider: mask(provider) }),
      model: mask(model),
      thinking_level: thinking,
      reviewer: reviewerOf(settings, model, mask),
      message: task,
    },
    summary: `subagent "${taskName}" with ${what}, run by ${runs} thinking ${thinking}, its ` +
      `calls reviewed by ${reviewerOf(settings, model, mask)}`,
    reason: 'A subagent reviews its own calls with the AUTO reviewer (your "ask" rules ' +
      "still come to you): handing it tools that change things needs your approval in ASK mode",
    // The task is the parent's model's words for the child: shown as the model's, unverified.
    modelReason: `Task: ${task}`,
    profile: settings.profile,
    rememberable: false,
  };
}

/** Who judges the child's calls, in words (as the child's gate picks its reviewer). */
function reviewerOf(settings: ParentSettings, model: string, mask: (text: string) => string) {
  if (settings.serverChosen) {
    return "no model (a project's files chose the model server: every such call is refused)";
  }
  return settings.reviewModel === undefined
    ? `its own model "${mask(model)}"`
    : `your reviewModel "${settings.reviewModel}"`;
}

/** `text` cut to `max` characters, saying how many more there were. */
function cut(text: string, max: number): string {
  return text.length <= max
    ? text
    : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}
