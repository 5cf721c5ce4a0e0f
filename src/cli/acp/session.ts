/**
 * One ACP session: a tern agent session (`openAgentSession`) whose events become
 * `session/update` notifications, whose ASK questions become `session/request_permission`
 * requests to the editor, and whose turns `TurnControl` runs and cancels.
 */
import {
  type AgentContext,
  type ClientCapabilities,
  type ContentBlock,
  methods,
  type PermissionOption,
  type PromptResponse,
  type SessionUpdate,
  type ToolCallContent,
} from "@agentclientprotocol/sdk";
import type { ConfigFlags } from "../../config/mod.ts";
import type { AgentEvent } from "../../core/events.ts";
import { visibleText } from "../../core/terminal_text.ts";
import { type AgentSession, openAgentSession } from "../../harness/agent_session.ts";
import type { SessionChoice } from "../../harness/run_session.ts";
import { TurnControl } from "../../harness/turn_control.ts";
import {
  allowLabel,
  type AskPerson,
  noteLabel,
  type PersonAnswer,
  type ReviewRequest,
} from "../../sandbox/review.ts";
import { ATTACHED_FILE_CHARS, promptMessage, type ReadBuffer } from "./prompt.ts";
import {
  decisionText,
  declaredArgs,
  declaredKeys,
  historyUpdates,
  maskedUpdate,
  NoticeQuoter,
  noticeUpdate,
  proposedDiffContent,
  shownToEditor,
  stopReasonFor,
  toolKind,
  updateFor,
} from "./updates.ts";

/** The permission options tern offers, by id; an answer with any other id is a denial. */
const ALLOW_ONCE = "allow_once";
const ALLOW_SESSION = "allow_session";
const REJECT = "reject";

export interface AcpSessionOptions {
  /** The session's working directory: an absolute real path. */
  workspace: string;
  flags: ConfigFlags;
  /** A new session (`{}`) or the one to load (`{ resume: id }`). */
  choice: SessionChoice;
  client: AgentContext;
  /** What the editor said it can do at `initialize`. */
  capabilities: ClientCapabilities | undefined;
  /** Logs a line on stderr. */
  log: (text: string) => void;
}

export class AcpSession {
  readonly #options: AcpSessionOptions;
  readonly #turns = new TurnControl();
  #agent!: AgentSession;
  /** Updates go out one after another, in event order. */
  #updates: Promise<void> = Promise.resolve();
  /**
   * Calls waiting for review, in the order their `permission_request` came; a call leaves when
   * its `permission_decision` comes (or its turn ends), so a dialog never names a settled call.
   */
  #asking: Array<{ callId: string; name: string; summary: string }> = [];
  /** The tool calls of the running turn the editor was shown and that have not ended. */
  #calls = new Set<string>();
  /** Aborted by `cancel()`: the prompts not yet running as a turn (reading linked files). */
  #starting = new Set<AbortController>();
  /** Set by `close()`: no prompt runs after it. */
  #closed = false;
  /**
   * The answer's and the thinking's words as they stream, with `[tern:` quoted: what tern
   * sends as its own lines ({@linkcode noticeUpdate}) they cannot pass for.
   */
  readonly #quoters = { text_delta: new NoticeQuoter(), thinking_delta: new NoticeQuoter() };

  private constructor(options: AcpSessionOptions) {
    this.#options = options;
  }

  /**
   * Opens the tern session (connecting the models).
   * @throws the core's errors: bad settings, an unknown session, a missing key.
   */
  static async open(options: AcpSessionOptions): Promise<AcpSession> {
    const session = new AcpSession(options);
    session.#agent = await openAgentSession({
      workspace: options.workspace,
      flags: options.flags,
      session: options.choice,
      emit: (event) => session.#event(event),
      person: session.#ask,
      warn: (text) => options.log(`warning: ${text}`),
      memory: true,
      consolidation: "defer",
    });
    for (const warning of session.#agent.session.warnings) options.log(warning);
    return session;
  }

  /** The session's working directory: an absolute real path. */
  get workspace(): string {
    return this.#options.workspace;
  }

  /** The ACP session id: tern's session id. */
  get id(): string {
    return this.#agent.session.id;
  }

  /**
   * Sends the session's conversation so far to the editor (`session/load`), masked for the keys
   * tern holds now.
   */
  async replay(): Promise<void> {
    const items = this.#agent.openedState.items.map((item) => item.message);
    const context = {
      workspace: this.#options.workspace,
      declaredKeys: this.#declaredKeys,
      // A read guard that cannot be made refuses every file: no replayed call gets a location.
      refuse: await this.#agent.conversation.readRefusal().catch(() => () => "unknown"),
      // Masked as a live call's id is, before it is made unique.
      editorId: (callId: string, ends: boolean) => this.#editorId(this.#mask(callId), ends),
    };
    for (const update of historyUpdates(items, context)) {
      this.#send(maskedUpdate(update, this.#mask));
    }
    // A call the history left without a result (an interrupted turn) is not open any more.
    this.#editorIds.clear();
    await this.#updates;
  }

  /**
   * Runs one turn for `blocks`; resolves when it ends, after its last update.
   * @throws {TurnBusyError} while another turn of this session runs.
   * @throws {Error} once the session is closing (a `session/load` of it opens it afresh).
   */
  async prompt(blocks: readonly ContentBlock[]): Promise<PromptResponse> {
    // A turn on a closing session would run its tools in a sandbox being taken down and write
    // to a session file the next holder may have opened.
    if (this.#closed) throw new Error(`Cannot run a prompt: session "${this.id}" is closed`);
    // A cancel before the turn runs (while the editor reads a linked file, or a cancelled turn
    // unwinds) has no turn to abort: it cancels this prompt, and no model is called.
    const starting = new AbortController();
    this.#starting.add(starting);
    let message: string;
    let typed: string;
    try {
      const prepared = await promptMessage(blocks, {
        workspace: this.#options.workspace,
        refusal: () => this.#agent.conversation.readRefusal(),
        readBuffer: this.#readBuffer(starting.signal),
        mask: (content) => this.#agent.conversation.maskKnownKeys(content),
      });
      message = prepared.text;
      typed = prepared.typed;
      for (const line of prepared.notAttached) this.#send(noticeUpdate(line));
      if (this.#turns.signal?.aborted) await this.#turns.idle();
    } finally {
      this.#starting.delete(starting);
    }
    if (starting.signal.aborted) {
      return { stopReason: "cancelled", _meta: { tern: { exitReason: "CANCELLED" } } };
    }
    // From here the turn exists as soon as run() is called: cancel() reaches it.
    // The reviewer judges against the person's words, not the files the editor attached.
    const result = await this.#turns.run(this.#agent.conversation, message, { goal: typed });
    this.#flushText();
    if (result.error !== undefined && result.exitReason !== "CANCELLED") {
      // ACP's stop reasons have no word for a failed model call: the person reads it instead.
      this.#send(noticeUpdate(`${result.exitReason}: ${visibleText(result.error)}`));
    }
    await this.#updates;
    return {
      stopReason: stopReasonFor(result.exitReason, result.refused === true),
      _meta: {
        tern: {
          exitReason: result.exitReason,
          ...(result.error === undefined ? {} : { error: result.error }),
        },
      },
    };
  }

  /**
   * Cancels the running turn (and the permission requests it waits on), or a prompt still
   * being prepared.
   */
  cancel(): void {
    for (const starting of this.#starting) starting.abort();
    this.#turns.abort();
  }

  /** Cancels what runs and closes the tern session; `signal` cuts its SessionEnd hooks short. */
  async close(signal?: AbortSignal): Promise<void> {
    this.#closed = true;
    this.cancel();
    await this.#turns.idle();
    await this.#agent.close(signal);
  }

  /**
   * The editor's buffer reads for one prompt, when it offers them; `signal` withdraws them. Once
   * they hold {@linkcode PROMPT_BUFFER_CHARS}, the editor is asked for no more.
   */
  #readBuffer(signal: AbortSignal): ReadBuffer | undefined {
    if (this.#options.capabilities?.fs?.readTextFile !== true) return undefined;
    let kept = 0;
    return async (path) => {
      signal.throwIfAborted();
      if (kept >= PROMPT_BUFFER_CHARS) {
        throw new Error(`the prompt's files passed ${PROMPT_BUFFER_CHARS} characters`);
      }
      const response = await this.#options.client.request(methods.client.fs.readTextFile, {
        sessionId: this.id,
        path,
      }, { cancellationSignal: signal, stopWaitingOnCancel: true });
      // The SDK does not check the editor's answer: one with no text is a failed read, never
      // a number or a list turned into the file's text.
      if (typeof response?.content !== "string") {
        throw new Error("the editor's answer holds no text (content is not a string)");
      }
      // What a message keeps of it (it is cut, then masked, in prompt.ts) counts.
      kept += Math.min(response.content.length, ATTACHED_FILE_CHARS);
      return response.content;
    };
  }

  /** Masks the keys tern knows of and key formats, as tern masks what else it sends. */
  #mask = (text: string): string => this.#agent.conversation.maskKnownKeys(text);

  /** The argument keys `tool` declares, among the tools the model is offered now. */
  #declaredKeys = (tool: string): ReadonlySet<string> =>
    declaredKeys(this.#agent.conversation.toolSpecs(), tool);

  /**
   * The editor's id of each call open now, by the model's id. The model picks call ids, and
   * may use one again in a later answer; ACP wants them unique in a session, and an editor
   * that updates its cards by id would merge a later call into an earlier one.
   */
  #editorIds = new Map<string, string>();
  /** Every id this session gave the editor. */
  #shownIds = new Set<string>();

  /** `event` with its call named by the editor's id for it (a fresh one for a new call). */
  #withEditorId(event: AgentEvent): AgentEvent {
    if (!("callId" in event)) return event;
    const id = this.#editorId(event.callId, event.type === "tool_end");
    return id === event.callId ? event : { ...event, callId: id };
  }

  /**
   * The editor's id for the model's `callId`: the open call's, or a fresh one no call of this
   * session (replayed ones included) had. `ends`: the call ended, and the model's id may name
   * another call later.
   */
  #editorId(callId: string, ends: boolean): string {
    let id = this.#editorIds.get(callId);
    if (id === undefined) {
      id = callId;
      for (let n = 2; this.#shownIds.has(id); n++) id = `${callId}~${n}`;
      this.#shownIds.add(id);
      this.#editorIds.set(callId, id);
    }
    if (ends) this.#editorIds.delete(callId);
    return id;
  }

  #event(model: AgentEvent): void {
    let event = this.#withEditorId(model);
    if (event.type === "text_delta" || event.type === "thinking_delta") {
      // The other stream's held end goes first: it came first.
      this.#flushText(event.type === "text_delta" ? "thinking_delta" : "text_delta");
      const text = this.#quoters[event.type].push(event.text);
      if (text === "") return;
      event = { ...event, text };
    } else {
      this.#flushText();
    }
    if (event.type === "tool_start") {
      this.#calls.add(event.callId);
    } else if (event.type === "tool_end") {
      this.#calls.delete(event.callId);
    } else if (event.type === "permission_request") {
      this.#asking.push({ callId: event.callId, name: event.name, summary: event.summary });
    } else if (event.type === "permission_decision") {
      const asked = this.#asking.find((entry) => entry.callId === event.callId);
      this.#asking = this.#asking.filter((entry) => entry.callId !== event.callId);
      // A person's answer is the dialog itself, a call's verdict shows in its result; what
      // settles with no call shown (the approvals and grants a loaded session restores) is
      // told, so nothing comes back silently.
      if (event.by !== "person" && !this.#calls.has(event.callId)) {
        this.#send(noticeUpdate(decisionText(event, asked)));
      }
    } else if (event.type === "turn_end") {
      this.#asking = [];
      this.#calls.clear();
      this.#editorIds.clear();
    }
    // Only what becomes an update waits for the editor: an event it is never sent (a command's
    // output, chunk by chunk) would otherwise be held while it does not read, without bound.
    if (!shownToEditor(event)) return;
    const context = {
      workspace: this.#options.workspace,
      readRefusal: () => this.#agent.conversation.readRefusal(),
      declaredKeys: this.#declaredKeys,
      mask: this.#mask,
    };
    // One event that cannot be turned into an update is logged and skipped: it must not end
    // the process (an unhandled rejection) nor stop the updates after it.
    this.#updates = this.#updates.then(async () => {
      let update: SessionUpdate | undefined;
      try {
        update = await updateFor(event, context);
      } catch (error) {
        this.#options.log(`Cannot tell the editor about a ${event.type}: ${messageOf(error)}`);
      }
      if (update !== undefined) await this.#notify(update);
    });
  }

  /** Sends what the quoters hold of the streams `types` (default: both). */
  #flushText(...types: Array<"text_delta" | "thinking_delta">): void {
    for (const type of types.length > 0 ? types : (["text_delta", "thinking_delta"] as const)) {
      const text = this.#quoters[type].flush();
      if (text === "") continue;
      this.#send({
        sessionUpdate: type === "text_delta" ? "agent_message_chunk" : "agent_thought_chunk",
        content: { type: "text", text },
      });
    }
  }

  #send(update: SessionUpdate): void {
    this.#updates = this.#updates.then(() => this.#notify(update));
  }

  /** Sends one update; a failure (the editor went away) is logged, never thrown. */
  async #notify(update: SessionUpdate): Promise<void> {
    try {
      await this.#options.client.notify(methods.client.session.update, {
        sessionId: this.id,
        update,
      });
    } catch (error) {
      this.#options.log(`Cannot send an update to the editor: ${messageOf(error)}`);
    }
  }

  /**
   * ASK mode's question, as the editor's permission dialog: allow once, allow for this
   * session (only when tern can remember the call safely), deny. The answer is taken exactly;
   * anything else (an unknown option, a cancelled dialog, a failed request) denies.
   */
  #ask: AskPerson = async (request, signal) => {
    // The call's own `tool_call` update goes out first, so the dialog can refer to it.
    await this.#updates;
    // Only calls still waiting are in `#asking`: the first that matches is this call, or one
    // that reads the same (read-only calls run together and may ask at once).
    const index = this.#asking.findIndex((asked) =>
      asked.summary === request.summary && asked.name === request.tool
    );
    const callId = index >= 0 ? this.#asking.splice(index, 1)[0].callId : crypto.randomUUID();
    const args = declaredArgs(request.args, this.#declaredKeys(request.tool));
    const options: PermissionOption[] = [
      // A grant lasts for the turn or the session it asks for: named so, never "once".
      {
        optionId: ALLOW_ONCE,
        name: `A${allowLabel(request).slice(1)}`,
        kind: request.grantFor === "session" ? "allow_always" : "allow_once",
      },
      ...(request.rememberable
        ? [{
          optionId: ALLOW_SESSION,
          name: sessionOptionName(request),
          kind: "allow_always" as const,
        }]
        : []),
      { optionId: REJECT, name: "Deny", kind: "reject_once" },
    ];
    const response = await this.#options.client.request(
      methods.client.session.requestPermission,
      {
        sessionId: this.id,
        toolCall: {
          toolCallId: callId,
          title: `${visibleText(request.tool)}: ${visibleText(request.summary)}`,
          kind: toolKind(false, args),
          status: "pending",
          rawInput: request.args,
          content: [
            questionText(request),
            ...await proposedDiffContent(args, this.#options.workspace, {
              refuse: await this.#agent.conversation.readRefusal(),
              mask: this.#mask,
            }),
          ],
        },
        options,
      },
      { cancellationSignal: signal, stopWaitingOnCancel: true },
    );
    return answerFor(response.outcome, request);
  };
}

/** The person's answer for the editor's `outcome`: only the options offered count. */
export function answerFor(
  outcome: { outcome: "cancelled" } | { outcome: "selected"; optionId: string },
  request: Pick<ReviewRequest, "rememberable">,
): PersonAnswer {
  if (outcome.outcome !== "selected") return "deny";
  if (outcome.optionId === ALLOW_ONCE) return "once";
  if (outcome.optionId === ALLOW_SESSION && request.rememberable) return "session";
  return "deny";
}

/**
 * The "allow for this session" option's name: it says how much more than this call it allows
 * (`Allow any "python3 …" command for this session`), the remembered key being a prefix, the
 * whole tool or the host.
 */
export function sessionOptionName(request: Pick<ReviewRequest, "rememberAs">): string {
  return request.rememberAs === undefined
    ? "Allow for this session"
    : `Allow ${visibleText(request.rememberAs)} for this session`;
}

/**
 * Why the call needs an answer: the policy's reason, then a rule's or hook's note and the
 * model's own reason, each marked; then how
 * much "allow for this session" allows, when it is offered. Each part on its own line, controls
 * and invisible characters made visible.
 */
function questionText(request: ReviewRequest): ToolCallContent {
  const said = request.modelReason === undefined || request.modelReason.trim() === ""
    ? ""
    : `\nModel's reason (unverified): ${visibleText(request.modelReason)}`;
  const scope = request.rememberable && request.rememberAs !== undefined
    ? `\n"Allow for this session" allows ${visibleText(request.rememberAs)}, not only this call`
    : "";
  // A rule's or hook's words, apart from tern's and labelled with who gave them.
  const note = request.note === undefined
    ? ""
    : `\n${noteLabel(request.note)} ${visibleText(request.note.text.replace(/\s+/g, " "))}`;
  const reason = visibleText(request.reason);
  // The command shown is masked: a key format can take in shell syntax that runs.
  const hidden = request.hiddenKeys
    ? "Part of this call is hidden as a key: what is shown may not be all that runs; deny if " +
      "unsure\n"
    : "";
  return {
    type: "content",
    content: { type: "text", text: `${hidden}${reason}${note}${said}${scope}` },
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Characters of editor buffers one prompt may attach, at most: past any model's context window
 * (a prompt of 100,000 links had tern hold 200,000 characters of each).
 */
const PROMPT_BUFFER_CHARS = 20 * ATTACHED_FILE_CHARS;
