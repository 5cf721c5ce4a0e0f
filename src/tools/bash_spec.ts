/**
 * What the model is told about `bash`: its description and its parameters' JSON Schema, for a
 * given default timeout. The schema is the tool's one definition: a call whose arguments
 * conform to it runs without loading zod (`json_conforms.ts`), and zod, built from the same
 * schema, words the errors of the others (`define.ts`). No imports: the agent loads this to
 * tell the model a configured default before any tool's code loads.
 */
import type { JsonSchema } from "../core/tool_spec.ts";

/** Timeout when `timeout_ms` is not given, in milliseconds. */
export const DEFAULT_BASH_TIMEOUT_MS = 120_000;
/** Largest `timeout_ms` accepted, in milliseconds. */
export const MAX_BASH_TIMEOUT_MS = 600_000;

/** A `bash` call's arguments, as {@linkcode bashParameters} accepts them. */
export interface BashArgs {
  command: string;
  timeout_ms?: number;
  description?: string;
  run_in_background?: boolean;
  ready_port?: number;
  ready_text?: string;
}

/** The parameters' schema, with `defaultMs` as the stated default timeout. */
export function bashParameters(defaultMs: number): JsonSchema {
  return {
    type: "object",
    properties: {
      command: {
        type: "string",
        minLength: 1,
        description: 'The command, run with "bash -c" in the workspace root',
      },
      timeout_ms: {
        description: `Stop the command after this many milliseconds; default ${defaultMs}`,
        type: "integer",
        minimum: 1,
        maximum: MAX_BASH_TIMEOUT_MS,
      },
      description: {
        description: "A few words on what the command does, shown to the user",
        type: "string",
      },
      run_in_background: {
        description: "Start the command as a background process (a dev server, a watcher, a " +
          "long build) and return its id; see process_list, process_logs and process_stop",
        type: "boolean",
      },
      ready_port: {
        description:
          "With run_in_background: the process is ready once 127.0.0.1:<port> accepts connections",
        type: "integer",
        minimum: 1,
        maximum: 65535,
      },
      ready_text: {
        description:
          "With run_in_background: the process is ready once its output contains this text",
        type: "string",
        minLength: 1,
        maxLength: 1000,
      },
    },
    required: ["command"],
    additionalProperties: false,
  };
}

/** The tool's description, with `defaultMs` as the stated default timeout. */
export function bashDescription(defaultMs: number): string {
  return `Run a bash command in the workspace root and return its output (stdout and stderr together)
followed by "exit code: N". A non-zero exit code is reported, not treated as a tool error.
stdin is closed, so interactive commands fail; secrets are not in the environment.
Timeout ${defaultMs / 1000} s by default (max ${
    MAX_BASH_TIMEOUT_MS / 1000
  } s); on timeout everything the command started is killed.
Background processes are stopped when the command ends. Long output is shown as its beginning and end plus the path of a file holding all of it.
Prefer read, grep, glob and edit for files.
With run_in_background the command keeps running in a sandbox of its own until process_stop or
the end of the session; declare ready_port or ready_text to wait (timeout_ms, default 30 s) until
it is ready. Under a sandbox without the host network it listens on its own loopback: later
commands cannot connect to it (they have theirs); use ready_port and process_logs instead.`;
}

/** The default timeout for a configured one: capped at the maximum, 120 s when not given. */
export function bashDefaultTimeout(configuredMs: number | undefined): number {
  return Math.min(configuredMs ?? DEFAULT_BASH_TIMEOUT_MS, MAX_BASH_TIMEOUT_MS);
}
