/**
 * Phase marks of one run, for locating where time goes (issue 21's `--profile`): with
 * `TERN_PHASE_MARKS=<file>` in the environment, `phaseMark()` records a `performance.mark`, and at
 * the process's exit (`unload`, also after `Deno.exit()`) every mark is written as one JSON line:
 * `{"name":"request","at":12.3,"epochMs":1764624000123.4,"detail":{"n":1}}` where `at` is
 * milliseconds since the process's time origin and `epochMs` the same moment on the wall clock,
 * so a benchmark can line the marks up with its own clock.
 *
 * Without `TERN_PHASE_MARKS` every call returns at once: the hot path pays one boolean test. The
 * file must be writable by tern's process (its home or the temp directory under `bin/tern`).
 */

type Detail = Record<string, string | number>;

interface Mark {
  name: string;
  at: number;
  detail?: Detail;
}

/** The profile file, or undefined when profiling is off (also when the variable is unreadable). */
function profilePath(): string | undefined {
  try {
    const path = Deno.env.get("TERN_PHASE_MARKS");
    return path === undefined || path === "" ? undefined : path;
  } catch {
    return undefined;
  }
}

const path = profilePath();
const marks: Mark[] = [];

/** Whether `TERN_PHASE_MARKS` turned profiling on for this process. */
export const profiling: boolean = path !== undefined;

/** Records the phase `name` now (with `detail`, e.g. a round number) when profiling is on. */
export function phaseMark(name: string, detail?: Detail): void {
  if (!profiling) return;
  const at = performance.mark(name, detail ? { detail } : undefined).startTime;
  marks.push(detail ? { name, at, detail } : { name, at });
}

/**
 * Writes the marks to the profile file as JSON lines, at exit; a write that fails is reported
 * on stderr and does not fail the run.
 */
function flushPhaseMarks(): void {
  const origin = performance.timeOrigin;
  const lines = marks.map((m) => JSON.stringify({ ...m, epochMs: origin + m.at }) + "\n");
  try {
    Deno.writeTextFileSync(path!, lines.join(""));
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    console.error(`tern: warning: Cannot write the profile "${path}": ${detail}`);
  }
}

if (profiling) {
  // Also when the run ends through Deno.exit(), not by returning from main.
  globalThis.addEventListener("unload", () => {
    phaseMark("exit");
    flushPhaseMarks();
  });
}
