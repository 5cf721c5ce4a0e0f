/**
 * `tern rpc`'s permission requests: ASK mode's questions sent as `permission_request` lines,
 * settled by `answer_permission` commands exactly as the client answers, or withdrawn.
 */
import type { AskPerson, PersonAnswer, ReviewRequest } from "../../sandbox/review.ts";
import type { RpcOutput } from "./protocol.ts";

interface Pending {
  request: ReviewRequest;
  resolve: (answer: PersonAnswer) => void;
}

/** The permission requests waiting for the client's answer. */
export class PermissionDesk {
  #pending = new Map<string, Pending>();
  #next = 1;
  #closed = false;
  readonly #send: (output: RpcOutput) => void;

  constructor(send: (output: RpcOutput) => void) {
    this.#send = send;
  }

  get pending(): string[] {
    return [...this.#pending.keys()];
  }

  /** ASK mode's question, sent as a `permission_request` line; the signal withdraws it. */
  ask: AskPerson = (request, signal) => {
    if (this.#closed || signal.aborted) return Promise.resolve("deny");
    const requestId = `p${this.#next++}`;
    const { promise, resolve, reject } = Promise.withResolvers<PersonAnswer>();
    this.#pending.set(requestId, { request, resolve });
    signal.addEventListener("abort", () => {
      if (!this.#pending.delete(requestId)) return;
      this.#send({ type: "permission_cancelled", requestId });
      reject(new Error("cancelled"));
    }, { once: true });
    this.#send({
      type: "permission_request",
      requestId,
      tool: request.tool,
      summary: request.summary,
      reason: request.reason,
      // The summary and args are masked, and a key format can take in shell syntax that runs.
      ...(request.hiddenKeys ? { hiddenKeys: true } : {}),
      ...(request.modelReason === undefined ? {} : { modelReason: request.modelReason }),
      ...(request.note === undefined ? {} : { note: request.note }),
      profile: request.profile,
      rememberable: request.rememberable,
      // "session" allows more than this call (a command prefix, the whole tool, the host).
      ...(request.rememberable && request.rememberAs !== undefined
        ? { rememberAs: request.rememberAs }
        : {}),
      ...(request.grantFor === undefined ? {} : { grantFor: request.grantFor }),
      args: request.args,
    });
    return promise;
  };

  /**
   * Settles request `requestId` with `answer`.
   * @throws {Error} for an unknown request, or "session" where it cannot be remembered (the
   * request keeps waiting then: an answer is never widened or narrowed by guessing).
   */
  answer(requestId: string, answer: PersonAnswer): void {
    const pending = this.#pending.get(requestId);
    if (pending === undefined) {
      throw new Error(
        `Unknown permission request "${requestId}": it was answered or withdrawn already`,
      );
    }
    if (answer === "session" && !pending.request.rememberable) {
      throw new Error(
        `Cannot allow request "${requestId}" for the session: this call cannot be remembered; ` +
          'answer "once" or "deny"',
      );
    }
    this.#pending.delete(requestId);
    pending.resolve(answer);
  }

  /** Denies what waits, and every later request. */
  close(): void {
    this.#closed = true;
    for (const [requestId, pending] of this.#pending) {
      this.#pending.delete(requestId);
      pending.resolve("deny");
    }
  }
}
