/**
 * tern's agent events and session history as ACP `session/update`s: text and thinking chunks,
 * tool calls with their status, locations and proposed diffs. Pure translation, plus the one
 * read a diff needs. A call's title, kind, locations and diff are read only from the arguments
 * its tool declares, with what a display would obey made visible; `rawInput` is the call as
 * the model wrote it.
 */
import type {
  SessionUpdate,
  StopReason,
  ToolCallContent,
  ToolKind,
} from "@agentclientprotocol/sdk";
import { COPY, copyJson } from "../../core/json_depth.ts";
import { dirname, isAbsolute, resolve, sep } from "../../core/path.ts";
import type { AgentEvent, ExitReason } from "../../core/events.ts";
import type { Message } from "../../core/messages.ts";
import { type Observation, observationText } from "../../core/observation.ts";
import { hasHiddenCharacter, visibleText } from "../../core/terminal_text.ts";
import type { ToolSpec } from "../../core/tool_spec.ts";
import { userVoice, voiceLine } from "../../session/voice.ts";
import { type DiffReading, proposedChange } from "../interactive/proposed_diff.ts";
import type { ReadRefusal } from "../../config/workspace_file.ts";
import { refusedPath } from "./prompt.ts";

/** Longest tool output sent to the editor, in characters; the rest is counted, not sent. */
const OUTPUT_CHARS = 20_000;

declare const declared: unique symbol;

/**
 * A call's arguments cut to the keys its tool declares ({@linkcode declaredArgs}): all a title,
 * kind, location or diff is read from. A key the tool does not declare is refused when the call
 * runs, so it must not dress the call up as another (`write` with a `command`).
 */
export type DeclaredArgs = Readonly<Record<string, unknown>> & { readonly [declared]: true };

/**
 * The argument keys `tool` declares (its schema's `properties`) among the tools the model is
 * offered (`Conversation.toolSpecs()`); none for a tool it is not offered.
 */
export function declaredKeys(specs: readonly ToolSpec[], tool: string): ReadonlySet<string> {
  const properties = specs.find((spec) => spec.name === tool)?.parameters.properties;
  return new Set(isRecord(properties) ? Object.keys(properties) : []);
}

/** `args` with only the `keys` its tool declares; nothing for arguments that are not an object. */
export function declaredArgs(args: unknown, keys: ReadonlySet<string>): DeclaredArgs {
  const record = isRecord(args) ? args : {};
  const kept = Object.entries(record).filter(([key]) => keys.has(key));
  return Object.fromEntries(kept) as Record<string, unknown> as DeclaredArgs;
}

/**
 * What a call does, from the shape of its declared arguments (never its name): read-only calls
 * read, a `command` executes, a `path` edits.
 */
export function toolKind(readOnly: boolean, args: DeclaredArgs): ToolKind {
  if (readOnly) return "read";
  if (typeof args.command === "string") return "execute";
  if (typeof args.path === "string") return "edit";
  return "other";
}

/**
 * The one line an editor shows for a call: its name and its first telling declared argument,
 * controls and invisible characters made visible (`⟨U+202E⟩`), never obeyed.
 */
export function toolTitle(name: string, args: DeclaredArgs): string {
  for (const key of ["command", "path", "pattern", "query", "url"]) {
    const value = args[key];
    if (typeof value === "string" && value !== "") {
      return `${visibleText(name)}: ${oneLine(value)}`;
    }
  }
  return visibleText(name);
}

/**
 * The file a call names, absolute, as an ACP location; none for a path holding a control or an
 * invisible character (`evil⟨U+202E⟩txt.sh` would read as `evilhs.txt` wherever the editor
 * shows it as it is): the title shows it made visible. None either for a file the model may not
 * read (`refuse`, or a workspace link leading out, as for a prompt's files): an editor that
 * follows the agent opens a call's location, and would show `~/.ssh/id_rsa` on the screen.
 */
export function toolLocations(
  args: DeclaredArgs,
  workspace: string,
  refuse: ReadRefusal,
): Array<{ path: string }> {
  if (typeof args.path !== "string" || args.path === "" || hasHiddenCharacter(args.path)) return [];
  const path = isAbsolute(args.path) ? resolve(args.path) : resolve(workspace, args.path);
  try {
    return refusedPath(path, workspace, refuse) === undefined ? [{ path }] : [];
  } catch {
    return []; // A guard that cannot decide gives no location; the call is still shown.
  }
}

/** {@linkcode toolLocations}, asking the read guard only when the call names a path. */
async function locationsOf(
  args: DeclaredArgs,
  context: UpdateContext,
): Promise<Array<{ path: string }>> {
  if (typeof args.path !== "string") return [];
  const refuse = await context.readRefusal().catch(() => undefined);
  return refuse === undefined ? [] : toolLocations(args, context.workspace, refuse);
}

/**
 * The change a writing call proposes, as an ACP diff (whole file before and after, hidden
 * characters made visible) with the keys and key formats `reading.mask` finds masked, as in all
 * else tern sends (the file's text is the person's, read for the diff alone: no other mask saw
 * it); for a file the model may not read (`reading.refuse`) or a link out of the workspace, a line
 * saying why there is none.
 */
export async function proposedDiffContent(
  args: DeclaredArgs,
  workspace: string,
  reading: DiffReading & { mask: (text: string) => string },
): Promise<ToolCallContent[]> {
  if (typeof args.path === "string" && hasHiddenCharacter(args.path)) {
    const shown = visibleText(args.path);
    return [{
      type: "content",
      content: { type: "text", text: `No diff: the path "${shown}" holds hidden characters` },
    }];
  }
  const change = proposedChange(args, workspace, reading);
  if (change !== undefined && "withheld" in change) {
    return [{ type: "content", content: { type: "text", text: `No diff: ${change.withheld}` } }];
  }
  if (change === undefined || !await staysInside(change.path, workspace)) return [];
  return [{
    type: "diff",
    path: change.path,
    oldText: shownText(reading.mask(change.before)),
    newText: shownText(reading.mask(change.after)),
  }];
}

/**
 * A file's text as a diff shows it to the person: what an editor would obey or hide (a bidi
 * override, a lone carriage return, a zero-width character) made visible (`⟨U+202E⟩`, `␍`), as
 * the terminal's diff does, so the change approved reads as what is written; line breaks, spaces
 * and tabs kept, so the lines still line up.
 */
function shownText(text: string): string {
  // Split on line breaks and runs of spaces and tabs, kept as they are (the odd parts).
  const parts = text.split(/(\r?\n|[ \t]+)/);
  return parts.map((part, index) => index % 2 === 1 ? part : visibleText(part)).join("");
}

/** What {@linkcode updateFor} needs besides the event. */
export interface UpdateContext {
  /** The session's working directory: an absolute real path. */
  workspace: string;
  /**
   * The conversation's read guard (Conversation.readRefusal()), asked only for a call that
   * names a path or writes.
   */
  readRefusal: () => Promise<ReadRefusal>;
  /** The argument keys a tool declares ({@linkcode declaredKeys}). */
  declaredKeys: (tool: string) => ReadonlySet<string>;
  /** Masks the keys tern knows of and key formats (Conversation.maskKnownKeys()): for diffs. */
  mask: (text: string) => string;
}

/** The events an editor is shown ({@linkcode updateFor} makes an update of no other). */
const SHOWN = new Set<AgentEvent["type"]>([
  "text_delta",
  "thinking_delta",
  "steering",
  "tool_start",
  "tool_input",
  "tool_end",
]);

/**
 * Whether {@linkcode updateFor} makes an update of `event`: a command's output as it comes
 * (`tool_update`) is not, so a session need not keep it until the editor reads again.
 */
export function shownToEditor(event: AgentEvent): boolean {
  return SHOWN.has(event.type);
}

/**
 * The update for `event`, or undefined for events an editor is not shown (turn bounds,
 * retries, permission bookkeeping: those reach it as the prompt's answer and as requests; a
 * decision about no call it was shown, the session sends with {@linkcode decisionText}).
 */
export async function updateFor(
  event: AgentEvent,
  context: UpdateContext,
): Promise<SessionUpdate | undefined> {
  const { workspace } = context;
  switch (event.type) {
    case "text_delta":
      return { sessionUpdate: "agent_message_chunk", content: { type: "text", text: event.text } };
    case "thinking_delta":
      return { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: event.text } };
    case "steering": {
      // Only the person's own words are the user's; what tern gave the model as a message (a
      // subagent's answer, a Stop hook's reason) is told as tern's line, as the terminal does.
      const voice = userVoice(event.text);
      return voice.from === "person"
        ? { sessionUpdate: "user_message_chunk", content: { type: "text", text: event.text } }
        : noticeUpdate(voiceLine(voice));
    }
    case "tool_start": {
      const args = declaredArgs(event.args, context.declaredKeys(event.name));
      const content = event.readOnly ? [] : await proposedDiffContent(args, workspace, {
        refuse: await context.readRefusal(),
        mask: context.mask,
      });
      return {
        sessionUpdate: "tool_call",
        toolCallId: event.callId,
        title: toolTitle(event.name, args),
        kind: toolKind(event.readOnly, args),
        status: "in_progress",
        rawInput: event.args,
        locations: await locationsOf(args, context),
        ...(content.length > 0 ? { content } : {}),
      };
    }
    case "tool_input": {
      // A hook's rewrite: the editor shows what runs.
      const args = declaredArgs(event.args, context.declaredKeys(event.name));
      return {
        sessionUpdate: "tool_call_update",
        toolCallId: event.callId,
        title: toolTitle(event.name, args),
        rawInput: event.args,
        locations: await locationsOf(args, context),
      };
    }
    case "tool_end":
      return {
        sessionUpdate: "tool_call_update",
        toolCallId: event.callId,
        status: event.observation.status === "SUCCEEDED" ? "completed" : "failed",
        content: [outputContent(event.observation)],
      };
    default:
      return undefined;
  }
}

/**
 * A line of tern's own for the person, `[tern: …]` in a paragraph of the answer's text: what
 * tern must not do silently (a file left out of a prompt, an approval restored with a loaded
 * session) goes where every editor shows it, not as ACP's optional `notice`, which an editor
 * may drop. Only these chunks carry `_meta.tern.notice`, and the same bracket text in the
 * model's or a tool's words is quoted ({@linkcode quoteNotices}), so none can pass for one.
 */
export function noticeUpdate(text: string): SessionUpdate {
  return {
    sessionUpdate: "agent_message_chunk",
    content: { type: "text", text: `\n\n${NOTICE_HEAD} ${text}]\n\n` },
    _meta: { tern: { notice: true } },
  };
}

/** How tern's own lines begin ({@linkcode noticeUpdate}). */
const NOTICE_HEAD = "[tern:";
/**
 * What a view shows as nothing between two parts of a forged head: invisible characters, and
 * markdown's backslash escapes (`[tern\:` shows as `[tern:`).
 */
const UNSEEN = String.raw`[\p{Cf}\p{Default_Ignorable_Code_Point}\\]*`;
/** An HTML character reference (`&#91;`, `&lbrack;`): a markdown view may show any character. */
const REFERENCE = String.raw`&#?[0-9a-z]{1,10};`;
/** The start of a reference, at the end of a chunk. */
const REFERENCE_START = String.raw`&#?[0-9a-z]{0,10}`;
/**
 * Each part of `[tern:` as a view may show it: itself, in any case, full width or as a
 * look-alike letter (Cyrillic `е`, Greek `Τ`), or a reference.
 */
const HEAD_PARTS = ["[［", "tｔтτ", "eｅеε", "rｒ", "nｎν", ":：∶꞉"].map((chars) =>
  `(?:[${chars}]|${REFERENCE})`
);
/**
 * The head of a notice in words that are not tern's, however a view could be made to show it
 * as `[tern:`; group 1 is what stands between the bracket and the colon.
 */
const FORGED_HEAD = new RegExp(
  `${HEAD_PARTS[0]}(${HEAD_PARTS.slice(1, -1).map((part) => UNSEEN + part).join("")}${UNSEEN})` +
    HEAD_PARTS.at(-1),
  "giu",
);
/** A text that is a forged head's start, not all of it: what a chunk's end may hold. */
const HEAD_START = new RegExp(
  `^${
    HEAD_PARTS.slice(0, -1).reduceRight(
      (rest, part) => `(?:${REFERENCE_START}|${part}${UNSEEN}(?:${rest})?)`,
      REFERENCE_START,
    )
  }$`,
  "iu",
);
/** The characters a forged head can begin with. */
const OPENERS = new Set(["[", "［", "&"]);
/** Longest start of a head held back, in characters; a longer one is let go with a quote. */
const HOLD_MAX = 4_096;

/**
 * `text` (the model's, a tool's: words that are not tern's) with each `[tern:` that would read
 * as the start of tern's own line quoted: `[“tern”:`. What a markdown view shows the same (an
 * invisible character or a backslash between the letters, a character reference, a look-alike
 * letter) is quoted too.
 */
export function quoteNotices(text: string): string {
  return text.replace(FORGED_HEAD, "[“$1”:");
}

/**
 * {@linkcode quoteNotices} over a text that comes in chunks (the answer as it streams): the end
 * of a chunk that could begin a forged head is held until the next chunk, or `flush()`, tells.
 * One longer than {@linkcode HOLD_MAX} (thousands of invisible characters) is let go with a
 * quote after its first character, so no later chunk can complete it.
 */
export class NoticeQuoter {
  #held = "";

  /** What to send of `chunk` now. */
  push(chunk: string): string {
    let text = this.#held + chunk;
    let out = "";
    for (;;) {
      const at = headStart(text);
      if (at === undefined) {
        this.#held = "";
        return out + quoteNotices(text);
      }
      if (text.length - at <= HOLD_MAX) {
        this.#held = text.slice(at);
        return out + quoteNotices(text.slice(0, at));
      }
      out += `${quoteNotices(text.slice(0, at))}${text[at]}“`;
      text = text.slice(at + 1);
    }
  }

  /** What is held: the text ended (or something else is sent next). */
  flush(): string {
    const held = this.#held;
    this.#held = "";
    return held;
  }
}

/**
 * Where the end of `text` that could begin a forged head starts (after the last whole one,
 * which {@linkcode quoteNotices} quotes); undefined when no end could.
 */
function headStart(text: string): number | undefined {
  let from = 0;
  for (const match of text.matchAll(FORGED_HEAD)) from = match.index + match[0].length;
  for (let at = from; at < text.length; at++) {
    if (OPENERS.has(text[at]) && HEAD_START.test(text.slice(at))) return at;
  }
  return undefined;
}

/** A review's outcome, as a `permission_decision` event reports it. */
export type Decision = Pick<
  Extract<AgentEvent, { type: "permission_decision" }>,
  "allow" | "by" | "reason"
>;

/**
 * How a review settled that no tool call the editor was shown stands for (the approvals and
 * grants a loaded session restores): what was asked, when it was, then the verdict and why,
 * made visible on one line: `allowed by policy: Restored from the session: …`.
 */
export function decisionText(
  decision: Decision,
  asked?: { name: string; summary: string },
): string {
  const what = asked === undefined
    ? ""
    : `${visibleText(asked.name)} ${visibleText(asked.summary)}: `;
  const verdict = decision.by === "bypass"
    ? "allowed (review bypassed)"
    : `${decision.allow ? "allowed" : "denied"} by ${decision.by}`;
  return `${what}${verdict}: ${visibleText(decision.reason)}`;
}

/** An observation as the text content of a tool call, cut to `OUTPUT_CHARS`. */
function outputContent(observation: Observation): ToolCallContent {
  const text = observationText(observation);
  const shown = text.length <= OUTPUT_CHARS
    ? text
    : `${text.slice(0, OUTPUT_CHARS)}… (${text.length - OUTPUT_CHARS} more characters)`;
  return { type: "content", content: { type: "text", text: quoteNotices(shown) } };
}

/** What {@linkcode historyUpdates} needs besides the messages. */
export interface HistoryContext extends Pick<UpdateContext, "workspace" | "declaredKeys"> {
  /** What tern may not read for the model (Conversation.readRefusal()): no location is given. */
  refuse: ReadRefusal;
  /**
   * The editor's id for the model's call id `callId`, as the live updates name it: a model may
   * use one id again in a later answer, and each call needs an id of its own. `ends` is true
   * for the call's result, after which the model's id may name another call.
   */
  editorId: (callId: string, ends: boolean) => string;
}

/**
 * A session's conversation replayed as updates (`session/load`): the person's messages, the
 * answers, and each tool call with its result.
 */
export function historyUpdates(
  messages: readonly Message[],
  context: HistoryContext,
): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  for (const message of messages) {
    if (message.role === "user" && message.content !== "") {
      const voice = userVoice(message.content);
      updates.push(
        voice.from === "person"
          ? {
            sessionUpdate: "user_message_chunk",
            content: { type: "text", text: message.content },
          }
          : noticeUpdate(voiceLine(voice)),
      );
    } else if (message.role === "assistant") {
      if (message.content !== "") {
        updates.push({
          sessionUpdate: "agent_message_chunk",
          content: { type: "text", text: quoteNotices(message.content) },
        });
      }
      for (const call of message.toolCalls ?? []) {
        const args = parseArgs(call.arguments);
        const shown = declaredArgs(args, context.declaredKeys(call.name));
        updates.push({
          sessionUpdate: "tool_call",
          toolCallId: context.editorId(call.id, false),
          title: toolTitle(call.name, shown),
          kind: "other",
          status: "completed",
          rawInput: args,
          locations: toolLocations(shown, context.workspace, context.refuse),
        });
      }
    } else if (message.role === "tool") {
      updates.push({
        sessionUpdate: "tool_call_update",
        toolCallId: context.editorId(message.toolCallId, true),
        status: message.content.startsWith("SUCCEEDED") ? "completed" : "failed",
        content: [{
          type: "content",
          content: { type: "text", text: quoteNotices(message.content.slice(0, OUTPUT_CHARS)) },
        }],
      });
    }
  }
  return updates;
}

/**
 * `update` with every string in it masked but its call's id (a replayed one: the session keeps a
 * key unmasked when tern did not hold it then, so what it sends of a loaded history is masked for
 * the keys it holds now, as `tern sessions show` is). The id is the editor's, made unique from
 * the model's id masked already: masked again, two calls could share one. Walks without recursion.
 */
export function maskedUpdate(update: SessionUpdate, mask: (text: string) => string): SessionUpdate {
  return copyJson(
    update,
    (item, { key }) => typeof item === "string" && key !== "toolCallId" ? mask(item) : COPY,
  ) as SessionUpdate;
}

/**
 * ACP's stop reason for how a turn ended: `refused` when a content filter or the model's refusal
 * ended it (tern's `CLIENT_ERROR`, ACP's `refusal`).
 */
export function stopReasonFor(exitReason: ExitReason, refused = false): StopReason {
  if (refused) return "refusal";
  switch (exitReason) {
    case "CANCELLED":
      return "cancelled";
    case "MAX_ROUNDS":
      return "max_turn_requests";
    case "LENGTH_LIMIT":
      return "max_tokens";
    default:
      return "end_turn";
  }
}

/**
 * Whether `path`, symlinks followed, is still inside `workspace` (a new file: its folder): a
 * link to a file elsewhere shows no content of that file.
 */
async function staysInside(path: string, workspace: string): Promise<boolean> {
  for (const candidate of [path, dirname(path)]) {
    try {
      const real = await Deno.realPath(candidate);
      return real === workspace || real.startsWith(workspace + sep);
    } catch {
      // Not there yet: its folder decides.
    }
  }
  return false;
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** `text` made visible (a line break as `↵`), so on one line, cut to 200 characters. */
function oneLine(text: string): string {
  const shown = [...visibleText(text.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, ""))];
  return shown.length <= 200 ? shown.join("") : `${shown.slice(0, 199).join("")}…`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
