/**
 * What the parent's person is shown of a child's escalated call. The child is trusted less than
 * the parent: what "allow for this session" would allow is read by the parent from the call
 * itself, never taken from the child's words.
 */
import type { AskNote, ReviewRequest } from "../../sandbox/review.ts";

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
 * for a denial without a person) is not passed on: the parent words its own denials. The
 * policy's `reason` is kept as it is (its risk label leads it); the origin is in `summary` and
 * `note`.
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
  // Where the call comes from is told in the summary and in the note, never in the reason: the
  // reason is the policy's, whose leading risk label ("destructive", "privileged") the front
  // ends read to word and colour the question. The note reaches the front ends that show a
  // grant's facts in place of its summary (the terminal's dialog) too.
  const origin = `subagent "${taskName}"`;
  const note: AskNote = request.note === undefined
    ? { from: origin, text: "" }
    : { from: `${request.note.from}, for ${origin}`, text: request.note.text };
  return {
    ...call,
    summary: `[subagent ${taskName}] ${request.summary}`,
    reason: request.reason,
    note,
    rememberable,
    ...(rememberable ? { rememberAs: `${scope} from subagent "${taskName}"` } : {}),
  };
}
