/** What a tool call produced, as the model and the front ends see it. */
import type { ImagePart } from "./messages.ts";

/** Error codes a tool call can end with. Models see them as `ERROR[CODE]`. */
export type ToolErrorCode =
  | "INVALID_ARGUMENTS"
  | "UNKNOWN_TOOL"
  | "POLICY_DENIED"
  | "NOT_FOUND"
  | "TIMEOUT"
  | "CANCELLED"
  | "EXECUTION_FAILED";

export type Observation =
  | {
    status: "SUCCEEDED";
    output: string;
    details?: ToolDetails;
    /** Images the result shows the model (read of an image file), after `output`. */
    images?: ImagePart[];
  }
  | { status: "ERROR"; code: ToolErrorCode; message: string };

/** UI-only detail about a tool result; never sent to the model. */
export type ToolDetails =
  | { kind: "diff"; path: string; diff: string }
  | { kind: "command"; exitCode: number | null; timedOut: boolean; truncated: boolean }
  | { kind: "file"; path: string; lines: number; truncated: boolean }
  | {
    kind: "matches";
    count: number;
    truncated: boolean;
    /** What searched (grep only): ripgrep, or the JavaScript engine where ripgrep cannot run. */
    engine?: "ripgrep" | "javascript";
  }
  | { kind: "web"; url: string; status: number; bytes: number; ms: number };

/** Thrown by a tool body to end the call with a specific error code. */
export class ToolError extends Error {
  override name = "ToolError";
  readonly code: ToolErrorCode;
  constructor(code: ToolErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

/** The text the model receives for an observation: a status line, then the output or message. */
export function observationText(obs: Observation): string {
  return obs.status === "SUCCEEDED"
    ? `SUCCEEDED\n${obs.output}`
    : `ERROR[${obs.code}]: ${obs.message}`;
}
