/**
 * The shape each known entry type must have to be read: the fields replay, the transcript and
 * the providers use, with their JSON types. A line that names a known type but lacks them (a
 * hand-edited or damaged file) is skipped like a torn line instead of failing later, deep in
 * a command, or reaching a provider as it is.
 */

type Check = (value: unknown) => boolean;

const string: Check = (value) => typeof value === "string";
const number: Check = (value) => typeof value === "number";
const boolean: Check = (value) => typeof value === "boolean";
const object: Check = (value) => typeof value === "object" && value !== null;
const nullable = (check: Check): Check => (value) => value === null || check(value);
const optional = (check: Check): Check => (value) => value === undefined || check(value);
const list = (check: Check): Check => (value) => Array.isArray(value) && value.every(check);
const oneOf = (...values: string[]): Check => (value) => values.includes(value as string);

/** `fields`: each named field passes its check (an absent field is `undefined`). */
function shape(fields: Record<string, Check>): Check {
  const entries = Object.entries(fields);
  return (value) =>
    object(value) && !Array.isArray(value) &&
    entries.every(([key, check]) => check((value as Record<string, unknown>)[key]));
}

const image = shape({ mediaType: string, data: string, sha256: string });
const toolCall = shape({ id: string, name: string, arguments: string });
const thinking = shape({ api: string, text: string });
const usage = shape({
  inputTokens: number,
  outputTokens: number,
  cachedTokens: number,
  reasoningTokens: number,
});

/** Each message role's shape (`core/messages.ts`). */
const MESSAGES: Record<string, Check> = {
  system: shape({ content: string }),
  user: shape({ content: string, images: optional(list(image)) }),
  assistant: shape({
    content: string,
    toolCalls: optional(list(toolCall)),
    thinking: optional(list(thinking)),
  }),
  tool: shape({ toolCallId: string, name: string, content: string, images: optional(list(image)) }),
};

const message: Check = (value) => {
  const role = object(value) ? (value as { role: unknown }).role : undefined;
  return typeof role === "string" && Object.hasOwn(MESSAGES, role) && MESSAGES[role](value);
};

const strings = list(string);
/**
 * Whether `value` is a `PermissionChange` (`types.ts`) as a `permission` entry must hold it: a
 * compaction's checkpoint holds its list too, and is read with the same check. Never throws.
 */
export const isPermissionChange: Check = (value) =>
  shape({ kind: oneOf("approval"), key: string })(value) ||
  shape({
    kind: oneOf("grant"),
    extra: shape({ read: strings, write: strings, net: strings, env: strings }),
    keys: strings,
    withoutSandbox: boolean,
  })(value);

/** Each known entry type's fields besides `id`, `parentId` and `timestamp` (`types.ts`). */
const ENTRIES: Record<string, Record<string, Check>> = {
  message: {
    message,
    usage: optional(usage),
    provider: optional(string),
    model: optional(string),
    cost: optional(number),
    saved: optional(number),
    mailbox: optional(strings),
  },
  model: { model: string, provider: optional(string), reason: optional(string) },
  thinking: { level: string },
  mode: { mode: string },
  profile: { profile: string },
  permission: { change: isPermissionChange },
  compaction: {
    summary: string,
    firstKeptId: nullable(string),
    tokensBefore: number,
    tokensAfter: number,
    summarisedCount: optional(number),
    fallback: optional(boolean),
    focus: optional(string),
    checkpoint: optional(object),
    subagentsBefore: optional(boolean),
  },
  branch: { fromId: nullable(string), summary: optional(string) },
  label: { targetId: string, label: string },
  pins: { pins: strings },
  plan: { data: object },
  subagent: { data: object },
  consolidation: { data: object },
};

/**
 * A session header's fields besides `type`, `version`, `id`, `cwd` and `created` (`types.ts`),
 * each absent or of its shape: a fork's `parent` and a subagent's `subagentOf` are shown by
 * `tern sessions show` and `tree`, and `subagentOf` keeps a subagent's session from being
 * continued, so a header with one of another shape is no header.
 */
const HEADER: Record<string, Check> = {
  ternVersion: optional(string),
  parent: optional(shape({ id: string, path: string, leafId: nullable(string) })),
  subagentOf: optional(
    shape({ sessionId: string, path: string, agentId: string, runId: string, taskName: string }),
  ),
  serverChosenBy: optional(string),
};

/**
 * The first optional field of the session header `value` that is present but not of its shape
 * (`"parent"`); undefined when every one is well formed or absent. Never throws.
 */
export function badHeaderField(value: Record<string, unknown>): string | undefined {
  return Object.entries(HEADER).find(([key, check]) => !check(value[key]))?.[0];
}

/**
 * The first field of `value`, an entry of the known type `type`, that is missing or not of
 * that type's shape (`"message"`, `"pins"`); undefined when every field is well formed. Never
 * throws. Values inside the fields (a mode's name, a profile) are checked where they are used.
 */
export function badEntryField(type: string, value: Record<string, unknown>): string | undefined {
  const fields = Object.entries(ENTRIES[type] ?? {});
  return fields.find(([key, check]) => !check(value[key]))?.[0];
}
