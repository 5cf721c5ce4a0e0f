/** The link between the host and one running worker, whichever backend runs it. */
import type { ChildMessage, HostMessage } from "./protocol.ts";

/** One running worker: a `deno run` process or a Worker thread. */
export interface Channel {
  /** Process id of the worker process; null for a Worker thread. */
  readonly pid: number | null;
  /**
   * Resolves once the worker is gone, with why in words ("exited with code 1: …"). Never
   * rejects.
   */
  readonly ended: Promise<string>;
  /**
   * Sends a message. Throws TypeError when it cannot be encoded (not JSON, not cloneable);
   * a worker that is gone is reported through `ended` instead.
   */
  send(message: HostMessage): void;
  /**
   * Ends the worker: lets it finish what it is doing for up to `graceMs` milliseconds, then
   * kills it (with everything it started). Resolves once it is gone; never rejects.
   */
  stop(graceMs: number): Promise<void>;
}

/** Receives each valid message from the worker; invalid ones are dropped. */
export type ChannelListener = (message: ChildMessage) => void;
