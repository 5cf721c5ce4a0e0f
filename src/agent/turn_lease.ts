/**
 * Turns that run at once share one sandbox (a plan's steps), and so whatever it is granted: a
 * grant "for this turn" given to one step would serve every step beside it, none of which asked
 * and for none of which the person (or the reviewer) decided. So a turn's grant belongs to one
 * turn alone: it is asked for once the asking turn is the only one running, and no other turn
 * starts until that turn ends (`PermissionGate.endTurn`). A second turn that asks meanwhile is
 * refused rather than made to wait: two turns waiting for each other to end would never end.
 * A turn of the session (not detached) counts as the only one: the front ends start none
 * while a plan runs.
 */
export class TurnLease {
  /** The detached turns running now. */
  #running = 0;
  /** Whether a turn waits for a grant of its own, or holds one (and runs alone). */
  #state: "none" | "waiting" | "held" = "none";
  #wake = Promise.withResolvers<void>();

  /** Counts a detached turn in; waits while another turn waits for or holds a grant. */
  async enter(signal?: AbortSignal): Promise<void> {
    while (this.#state !== "none") await this.#changed(signal);
    this.#running++;
  }

  /** Counts a detached turn out; the last one out ends a claim (its turn has ended). */
  leave(): void {
    this.#running--;
    if (this.#running === 0 && this.#state === "held") this.#state = "none";
    this.#notify();
  }

  /**
   * Claims a grant for the asking turn: true once it is the only turn running (at once when it
   * holds the claim already: only its holder runs then), false at once when another turn waits
   * for one.
   * @throws the signal's reason when it aborts while waiting (the claim is then given up).
   */
  async claim(signal?: AbortSignal): Promise<boolean> {
    if (this.#state === "held") return true;
    if (this.#state === "waiting") return false;
    this.#state = "waiting";
    try {
      while (this.#running > 1) await this.#changed(signal);
    } catch (error) {
      this.#state = "none";
      this.#notify();
      throw error;
    }
    this.#state = "held";
    return true;
  }

  /** Ends a claim held (the turn's grants are gone): other turns may start again. */
  release(): void {
    if (this.#state !== "held") return;
    this.#state = "none";
    this.#notify();
  }

  #notify(): void {
    this.#wake.resolve();
    this.#wake = Promise.withResolvers<void>();
  }

  async #changed(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const woken = this.#wake.promise;
    if (signal === undefined) return await woken;
    const aborted = Promise.withResolvers<void>();
    const onAbort = () => aborted.reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      await Promise.race([woken, aborted.promise]);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }
}
