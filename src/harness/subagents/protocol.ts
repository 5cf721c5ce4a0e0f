/**
 * The headless child protocol (docs/child-protocol.md): the parent writes one request line on
 * the child's stdin; the child writes only JSON lines on its stdout — events, escalations, then
 * one final record — and its logs on stderr. While the child runs, the parent may write answer
 * lines (escalation answers) on the child's stdin. Both sides validate every line with these
 * schemas; a line that does not parse is a protocol error, never guessed at.
 */
import * as z from "../../core/zod.ts";
import type { ReviewRequest } from "../../sandbox/review.ts";
import { CHILD_BASE_TOOLS, CHILD_PROTOCOL_VERSION } from "./constants.ts";

export { CHILD_BASE_TOOLS, CHILD_PROTOCOL_VERSION };

const id = z.string().min(1).max(200);
const thinking = z.enum(["off", "low", "medium", "high"]);
/** A file or folder of the cgroup tree. */
const cgroupPath = z.string().startsWith("/sys/fs/cgroup/").refine(
  (path) => !path.split("/").includes(".."),
  'a cgroup path without ".."',
);

/** A session-wide approval or grant the parent holds, as its session records it. */
const permissionChange = z.union([
  z.object({ kind: z.literal("approval"), key: z.string() }).strict(),
  z.object({
    kind: z.literal("grant"),
    extra: z.object({
      read: z.array(z.string()),
      write: z.array(z.string()),
      net: z.array(z.string()),
      env: z.array(z.string()),
    }).strict(),
    keys: z.array(z.string()),
    withoutSandbox: z.boolean(),
  }).strict(),
]);

/** The one line the parent writes first. */
export const childRequestSchema = z.object({
  type: z.literal("request"),
  version: z.literal(CHILD_PROTOCOL_VERSION),
  taskName: id,
  agentId: id,
  childSessionId: z.uuid(),
  runId: id,
  parentSession: z.object({ id: z.uuid(), path: z.string().min(1) }).strict(),
  prompt: z.string().min(1),
  /**
   * The person's own words the parent's calls were judged against when it spawned the child:
   * the child's AUTO reviewer judges against them, with `prompt` (the parent model's words)
   * only as untrusted context.
   */
  goal: z.string(),
  /** The workspace: an absolute path (the child resolves it again). */
  cwd: z.string().startsWith("/"),
  tools: z.object({
    /** Canonical tool names the child gets (the base tools always). */
    allow: z.array(z.string()),
  }).strict(),
  permissions: z.object({
    /** The parent's sandbox profile: the child's, never wider. */
    profile: z.string().min(1),
    noSandbox: z.boolean(),
    /** The parent's review mode; the child runs in AUTO whatever it is. */
    parentMode: z.enum(["ask", "auto", "bypass"]),
    /**
     * The parent's `autoNetwork` (who may widen the sandbox in AUTO): the child's own under an
     * AUTO parent, so that its reviewer grants no more than the parent's would.
     */
    autoNetwork: z.enum(["reviewer", "person", "never"]),
    /**
     * The parent's `autoAskRules` (who answers the person's "ask" rules in AUTO): the child's
     * own under an AUTO parent; an ASK parent's child leaves them to a person whatever it is.
     */
    autoAskRules: z.enum(["reviewer", "person"]),
    /** The parent's session-wide approvals and grants. */
    changes: z.array(permissionChange),
    /** How long the child waits for an escalation's answer, in milliseconds. */
    escalationTimeoutMs: z.number().int().positive(),
  }).strict(),
  /**
   * Longest the run may take from the request, in milliseconds (the parent's
   * `subagentTimeoutMs`): the child ends its turn then, even when the parent is gone.
   */
  timeoutMs: z.number().int().positive(),
  /**
   * The parent's run cgroups (src/sandbox/run_cgroup.ts), when it has them: the child's
   * commands join these, so one cap holds for the parent's and its children's commands
   * together. The parent made them and removes them; the child never does.
   */
  runCgroup: z.object({
    paths: z.array(cgroupPath).min(1),
    joinFiles: z.array(cgroupPath.regex(/\/(tasks|cgroup\.procs)$/)).min(1),
    processes: z.number().int().positive().optional(),
    memoryBytes: z.number().int().positive().optional(),
    events: cgroupPath.optional(),
  }).strict().optional(),
  model: z.object({
    provider: z.string().min(1).optional(),
    model: z.string().min(1),
    thinking,
    baseUrl: z.string().optional(),
    maxRounds: z.number().int().positive().optional(),
    /**
     * The project file that chose the parent's model server (`serverChooser()`, as
     * `dotenv:<path>`); absent: the person's own server. A child whose files choose a server
     * another way fails before its first request: a `.env` or `.tern/config.jsonc` a command
     * wrote since the parent started cannot send the child's conversation elsewhere.
     */
    serverChosenBy: z.string().optional(),
  }).strict(),
}).strict();

export type ChildRequest = z.infer<typeof childRequestSchema>;

/** How a child's run ended. */
export const childStatus = z.enum(["completed", "failed", "cancelled", "timed_out"]);
export type ChildStatus = z.infer<typeof childStatus>;

/** What the final record and a completion name. */
const identities = {
  taskName: id,
  agentId: id,
  childSessionId: z.uuid(),
  runId: id,
};

/**
 * What a person or reviewer is shown for an escalated call (`ReviewRequest`). `rememberAs` and
 * `allowCommands` are the child's words: the parent reads the call itself for what it shows of
 * them (src/harness/subagents/escalation.ts).
 */
export const reviewRequestSchema = z.object({
  tool: z.string(),
  args: z.unknown(),
  summary: z.string(),
  command: z.literal(true).optional(),
  allowCommands: z.array(z.string()).optional(),
  network: z.literal(true).optional(),
  reason: z.string(),
  hiddenKeys: z.literal(true).optional(),
  modelReason: z.string().optional(),
  note: z.object({ from: z.string(), text: z.string() }).strict().optional(),
  profile: z.string(),
  rememberable: z.boolean(),
  rememberAs: z.string().optional(),
  grantFor: z.enum(["turn", "session"]).optional(),
}).strict();

/**
 * Every field of `ReviewRequest` has a place in the schema: the schema is strict, so a field
 * the child sets that it lacks fails the child's line and with it the child's whole run.
 */
const _everyReviewField:
  [Exclude<keyof ReviewRequest, keyof z.infer<typeof reviewRequestSchema>>] extends [never] ? true
    : never = true;

/** One line the child writes. */
export const childLineSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("event"),
    version: z.literal(CHILD_PROTOCOL_VERSION),
    runId: id,
    /** An agent event (src/core/events.ts), passed on as it is. */
    event: z.object({ type: z.string() }).passthrough(),
  }).strict(),
  z.object({
    type: z.literal("escalation"),
    version: z.literal(CHILD_PROTOCOL_VERSION),
    runId: id,
    escalationId: id,
    request: reviewRequestSchema,
  }).strict(),
  z.object({
    type: z.literal("final"),
    version: z.literal(CHILD_PROTOCOL_VERSION),
    ...identities,
    status: childStatus,
    /** The child's answer (its last assistant text). */
    content: z.string(),
    /** The id of the last entry of the child's session; null when it wrote none. */
    finalEntryId: z.string().nullable(),
    error: z.string().optional(),
  }).strict(),
]);

export type ChildLine = z.infer<typeof childLineSchema>;
export type ChildFinal = Extract<ChildLine, { type: "final" }>;

/** A line the parent writes after the request: the answer to one escalation. */
export const parentLineSchema = z.object({
  type: z.literal("escalation_answer"),
  version: z.literal(CHILD_PROTOCOL_VERSION),
  escalationId: id,
  answer: z.enum(["once", "session", "deny"]),
  reason: z.string().optional(),
}).strict();

export type ParentLine = z.infer<typeof parentLineSchema>;

/**
 * Parses one protocol line with `schema`.
 * @throws {TypeError} naming what is wrong: not JSON, or not a valid line.
 */
export function parseLine<T>(schema: z.ZodType<T>, line: string, what: string): T {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new TypeError(`Cannot read ${what}: not JSON: ${JSON.stringify(line.slice(0, 200))}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? ` at "${issue.path.join(".")}"` : "";
    throw new TypeError(`Cannot read ${what}: ${issue?.message ?? "invalid"}${where}`);
  }
  return parsed.data;
}
