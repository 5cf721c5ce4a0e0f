/**
 * What the parent's person is shown of a child's escalated call. The child is trusted less than
 * the parent: what "allow for this session" would allow is read by the parent from the call
 * itself, never taken from the child's words.
 */
import type { ReviewRequest } from "../../sandbox/review.ts";

/**
 * What "allow for this session" would remember for a call of `tool` with `args`, in words
 * (`ReviewRequest.rememberAs`), as the parent's own gate reads the call; undefined when it
 * cannot tell or nothing can be remembered (a rejection counts as that).
 */
export type RememberScope = (tool: string, args: unknown) => Promise<string | undefined>;

/**
 * `request`, as subagent `taskName`'s call for the parent's person. "Allow for this session"
 * (which the child remembers for its run) is offered only when `rememberScope`, reading the call
 * itself, finds the scope the child names: a child cannot have the person widen its approvals
 * by naming a narrower scope than its own gate remembers. The child's `allowCommands` (rules
 * for a denial without a person) is not passed on: the parent words its own denials.
 */
export async function escalatedRequest(
  taskName: string,
  request: ReviewRequest,
  rememberScope: RememberScope | undefined,
): Promise<ReviewRequest> {
  const { allowCommands: _, rememberAs: claimed, ...call } = request;
  const scope = request.rememberable && claimed !== undefined
    ? await rememberScope?.(request.tool, request.args).catch(() => undefined)
    : undefined;
  const rememberable = scope !== undefined && scope === claimed;
  return {
    ...call,
    summary: `[subagent ${taskName}] ${request.summary}`,
    reason: `Subagent "${taskName}" asks: ${request.reason}`,
    rememberable,
    ...(rememberable ? { rememberAs: `${scope} from subagent "${taskName}"` } : {}),
  };
}
