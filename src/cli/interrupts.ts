/**
 * The signals that stop a run (`tern run`, `tern plan`) from its start: Ctrl-C, SIGTERM and
 * SIGHUP (a closed terminal, a supervisor stopping tern).
 */
import { EXIT_CANCELLED } from "./exit_codes.ts";

/** The signals that stop a run, and the exit code each gives (128 + its number). */
const STOP_SIGNALS = { SIGHUP: 129, SIGINT: EXIT_CANCELLED, SIGTERM: 143 } as const;

/**
 * Ctrl-C, SIGTERM and SIGHUP (a closed terminal, a supervisor stopping tern) for a whole run:
 * the first aborts `signal`, which cancels the turn the orderly way (the sandbox closes, its
 * tmp folder, cgroups and processes go with it); a second one while that goes on exits at
 * once. Disposing of it stops listening.
 */
export function listenForInterrupts(): Disposable & { signal: AbortSignal; exitCode(): number } {
  const controller = new AbortController();
  let received: keyof typeof STOP_SIGNALS = "SIGINT";
  const listeners = Object.keys(STOP_SIGNALS).map((name) => {
    const signal = name as keyof typeof STOP_SIGNALS;
    const listener = () => {
      if (controller.signal.aborted) Deno.exit(STOP_SIGNALS[signal]);
      received = signal;
      controller.abort();
    };
    Deno.addSignalListener(signal, listener);
    return () => Deno.removeSignalListener(signal, listener);
  });
  return {
    signal: controller.signal,
    /** The exit code of a run that was stopped: 128 + the number of the signal that came. */
    exitCode: () => STOP_SIGNALS[received],
    [Symbol.dispose]: () => listeners.forEach((remove) => remove()),
  };
}

/**
 * SIGTERM and SIGHUP for a front end that serves a program (`tern rpc`, `tern acp`), where
 * Ctrl-C has a meaning of its own: the first calls `stop` with the exit code (128 + the
 * signal's number), which closes in order (turns cancelled, the sandbox and its tmp folder,
 * cgroups and processes gone, the session closed); a second one while that goes on exits at
 * once. Disposing of it stops listening.
 */
export function onStopSignals(stop: (exitCode: number) => void): Disposable {
  let stopping = false;
  const listeners = (["SIGHUP", "SIGTERM"] as const).map((name) => {
    const listener = () => {
      if (stopping) Deno.exit(STOP_SIGNALS[name]);
      stopping = true;
      stop(STOP_SIGNALS[name]);
    };
    Deno.addSignalListener(name, listener);
    return () => Deno.removeSignalListener(name, listener);
  });
  return { [Symbol.dispose]: () => listeners.forEach((remove) => remove()) };
}
