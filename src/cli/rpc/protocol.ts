/**
 * The `tern rpc` protocol (docs/rpc.md): JSON lines both ways. Commands come in on stdin, one
 * object per line; responses, agent events and permission requests go out on stdout. This file
 * is its single definition: the zod schemas of the commands and the shapes of what goes out.
 */
import * as z from "../../core/zod.ts";
import type { AgentEvent } from "../../core/events.ts";
import type { PersonAnswer } from "../../sandbox/review.ts";

/** Bumped on any change a client could notice; the `ready` line says it. */
export const RPC_PROTOCOL_VERSION = 1;

/** The longest command line read, in characters; a longer one is refused, not parsed. */
export const RPC_MAX_LINE = 4 * 1024 * 1024;

/** The error for a line longer than `RPC_MAX_LINE`. */
export const TOO_LONG = `The line is longer than ${RPC_MAX_LINE} characters`;

/** A command's id: echoed in its response so a client can match them. */
const Id = z.union([z.string().max(200), z.number().int()]).optional();

/** Text with something in it: a prompt of spaces is a model call for nothing, as `tern run` says. */
const Text = z.string().refine((text) => text.trim() !== "", "must not be empty");

export const RpcCommand = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("prompt"), id: Id, message: Text }),
  z.strictObject({ type: z.literal("steer"), id: Id, message: Text }),
  z.strictObject({ type: z.literal("abort"), id: Id }),
  z.strictObject({ type: z.literal("fork"), id: Id, entryId: z.string().min(1).optional() }),
  z.strictObject({ type: z.literal("compact"), id: Id, focus: z.string().optional() }),
  z.strictObject({ type: z.literal("get_state"), id: Id }),
  z.strictObject({ type: z.literal("list_sessions"), id: Id, all: z.boolean().optional() }),
  z.strictObject({
    type: z.literal("set_model"),
    id: Id,
    model: Text,
    provider: z.string().min(1).optional(),
  }),
  z.strictObject({
    type: z.literal("rewind"),
    id: Id,
    target: Text,
    restore: z.enum(["files", "conversation", "both"]).optional(),
    apply: z.boolean().optional(),
    conflicts: z.enum(["keep", "overwrite"]).optional(),
  }),
  z.strictObject({
    type: z.literal("answer_permission"),
    id: Id,
    requestId: z.string().min(1),
    answer: z.enum(["once", "session", "deny"]),
  }),
]);

/** One command, validated. */
export type RpcCommand = z.infer<typeof RpcCommand>;

/** The command names, in the order docs/rpc.md lists them. */
export const RPC_COMMANDS: readonly RpcCommand["type"][] = RpcCommand.options.map((option) =>
  option.shape.type.value
);

/** What goes out on stdout, one per line. */
export type RpcOutput =
  | {
    type: "ready";
    protocol: number;
    tern: string;
    session: string;
    commands: readonly string[];
  }
  | {
    type: "response";
    id?: string | number;
    command?: string;
    ok: true;
    data?: Record<string, unknown>;
  }
  | { type: "response"; id?: string | number; command?: string; ok: false; error: string }
  | { type: "event"; event: AgentEvent }
  | {
    type: "permission_request";
    requestId: string;
    tool: string;
    summary: string;
    reason: string;
    /**
     * Part of the call was hidden as a key (`summary` and `args` are masked, and a key format can
     * take in shell syntax): what is shown may not be all that runs. Present only then.
     */
    hiddenKeys?: true;
    modelReason?: string;
    /** An ask rule's or a PreToolUse hook's words, and who gave them: not tern's. */
    note?: { from: string; text: string };
    profile: string;
    /** Whether the answer "session" may be given. */
    rememberable: boolean;
    /**
     * What the answer "session" allows from then on, in words (`any "python3 …" command`,
     * `any edit call`, `any request to example.com`): more than this one call. Present only
     * when `rememberable`.
     */
    rememberAs?: string;
    /**
     * A grant's reach: the answer "once" widens the sandbox for the rest of this turn or of the
     * session (`request_permissions`), not for one call. Absent for other calls.
     */
    grantFor?: "turn" | "session";
    args: unknown;
  }
  | { type: "permission_cancelled"; requestId: string };

/** A person's answer, as the command gives it. */
export type RpcAnswer = PersonAnswer;

/**
 * Parses one input line into a command, or says exactly what is wrong with it (and the id and
 * type, when they could be read, for the error response). Never throws.
 */
export function parseRpcLine(
  line: string,
): { command: RpcCommand } | { error: string; id?: string | number; type?: string } {
  if (line.length > RPC_MAX_LINE) return { error: TOO_LONG };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return { error: `The line is not JSON: ${(error as Error).message}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { error: "The line is not a JSON object" };
  }
  const record = value as Record<string, unknown>;
  // Only an id a command may have is echoed, and only a known type: a response never carries
  // megabytes the client sent.
  const id = Id.safeParse(record.id).data;
  const type = typeof record.type === "string" ? record.type : undefined;
  const known = type !== undefined && (RPC_COMMANDS as readonly string[]).includes(type);
  const where = { ...(id === undefined ? {} : { id }), ...(known ? { type } : {}) };
  if (type === undefined) {
    return { ...where, error: `The command has no "type": expected ${RPC_COMMANDS.join(", ")}` };
  }
  if (!known) {
    const shown = type.length > 64 ? `${type.slice(0, 64)}…` : type;
    return {
      ...where,
      error: `Unknown command ${JSON.stringify(shown)}: expected ${RPC_COMMANDS.join(", ")}`,
    };
  }
  const parsed = RpcCommand.safeParse(value);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((issue) => {
      const path = issue.path.length > 0 ? `"${issue.path.join(".")}"` : "the command";
      return `${path}: ${issue.message}`;
    }).join("; ");
    return { ...where, error: `Invalid "${type}" command: ${detail}` };
  }
  return { command: parsed.data };
}
