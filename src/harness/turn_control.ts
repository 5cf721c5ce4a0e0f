/**
 * One turn at a time, steerable and abortable from outside: what a front end that is not a
 * terminal (`tern rpc`, `tern acp`) holds around a conversation. Steering messages wait in a
 * queue that the loop takes at its next model boundary; an abort cancels the running turn.
 */
import type { TurnResult } from "../agent/loop.ts";
import type { Conversation, TurnOptions } from "./conversation.ts";
import { MessageTooLargeError } from "./errors.ts";

/** Messages that may wait for a running turn's next model call (each one is a turn's worth). */
export const MAX_QUEUED_STEERS = 100;

/** Thrown by `TurnControl.run()` when a turn already runs. */
export class TurnBusyError extends Error {
  override name = "TurnBusyError";
}

export class TurnControl {
  #abort: AbortController | undefined;
  #conversation: Conversation | undefined;
  #queue: string[] = [];
  #done: Promise<unknown> = Promise.resolve();

  /** True while a turn runs. */
  get running(): boolean {
    return this.#abort !== undefined;
  }

  /** The running turn's signal (aborted by `abort()`); undefined between turns. */
  get signal(): AbortSignal | undefined {
    return this.#abort?.signal;
  }

  /**
   * Runs one turn of `conversation` for `text`; steering and abort reach it. A turn aborted but
   * still unwinding is waited for first: a client that cancels and at once sends the next
   * message gets it run.
   * @throws {TurnBusyError} when a turn runs that was not aborted (nothing is started then).
   */
  async run(
    conversation: Conversation,
    text: string,
    options: Omit<TurnOptions, "signal" | "steering"> = {},
  ): Promise<TurnResult> {
    while (this.#abort?.signal.aborted) await this.#done;
    if (this.#abort !== undefined) {
      throw new TurnBusyError("A turn is already running: steer it, or abort it first");
    }
    const abort = new AbortController();
    this.#abort = abort;
    this.#conversation = conversation;
    this.#queue = [];
    const turn = (async () => {
      try {
        return await conversation.turn(text, {
          ...options,
          signal: abort.signal,
          steering: () => this.#queue.splice(0),
        });
      } finally {
        this.#abort = undefined;
        this.#queue = [];
      }
    })();
    this.#done = turn.catch(() => {});
    return turn;
  }

  /**
   * Queues `text` for the running turn's next model boundary. False when no turn runs (the
   * message is not kept).
   * @throws {MessageTooLargeError} when the model's context window could not hold the queued
   * messages with `text`, or {@linkcode MAX_QUEUED_STEERS} wait already (nothing is queued then).
   */
  steer(text: string): boolean {
    if (this.#abort === undefined || this.#abort.signal.aborted) return false;
    // Each message is checked with those queued before it: a flood of them would take that
    // check's time to the square of their number, on tern's thread (40,000 took 27 s).
    if (this.#queue.length >= MAX_QUEUED_STEERS) {
      throw new MessageTooLargeError(
        `Cannot queue another message for the running turn: ${MAX_QUEUED_STEERS} wait for its ` +
          "next model call already; wait for it to take them, or abort the turn",
      );
    }
    this.#conversation?.checkMessage([...this.#queue, text].join("\n\n"));
    this.#queue.push(text);
    return true;
  }

  /** Cancels the running turn; false when none runs. */
  abort(): boolean {
    if (this.#abort === undefined || this.#abort.signal.aborted) return false;
    this.#abort.abort();
    return true;
  }

  /** Resolves once no turn runs (never rejects). */
  async idle(): Promise<void> {
    while (this.#abort !== undefined) await this.#done;
  }
}
