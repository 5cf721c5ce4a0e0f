/**
 * Every process exit code of tern, decided here and nowhere else: 0 for a completed turn, a
 * distinct code for every other exit reason, and one for each kind of error that ends a run.
 * Errors below the CLI carry data about what went wrong; this file maps their classes to codes.
 */
import { ConfigError } from "../config/errors.ts";
import type { ExitReason } from "../core/events.ts";
import { MessageTooLargeError, NoPlanError, SessionChoiceError } from "../harness/errors.ts";
import { ProviderSetupError } from "../llm/errors.ts";
import {
  ConsolidationIdError,
  FactIdError,
  FactTextError,
  TemplateError,
  UnknownSkillError,
} from "../memory/errors.ts";
import { PlanningError } from "../plan/errors.ts";
import type { PlanState } from "../plan/types.ts";
import {
  SessionBusyError,
  SessionFileError,
  SessionRefError,
  UnknownEntryError,
} from "../session/errors.ts";
import { InputError, UsageError } from "./errors.ts";

/** A failure: a turn or plan that did not complete, an error meant for the person, a bug. */
export const EXIT_FAILURE = 1;
/** Bad usage or bad configuration. */
export const EXIT_USAGE = 2;
/** The person stopped the run (Ctrl-C: 128 + SIGINT). */
export const EXIT_CANCELLED = 130;

const BY_REASON: Record<ExitReason, number> = {
  COMPLETED: 0,
  MAX_ROUNDS: 3,
  REPEATED_FAILURE: 4,
  EMPTY_RESPONSE: 5,
  LENGTH_LIMIT: 6,
  CLIENT_ERROR: 7,
  CANCELLED: EXIT_CANCELLED,
};

/** The exit code of a turn that ended for `reason`. */
export function exitCodeFor(reason: ExitReason): number {
  return BY_REASON[reason];
}

/** The error classes that mean the person asked for something that cannot be done as asked. */
const USAGE_ERRORS = [
  UsageError,
  InputError,
  ConfigError,
  ProviderSetupError,
  SessionChoiceError,
  NoPlanError,
  MessageTooLargeError,
  SessionBusyError,
  SessionRefError,
  SessionFileError,
  UnknownEntryError,
  FactTextError,
  FactIdError,
  ConsolidationIdError,
  TemplateError,
  UnknownSkillError,
];

/** The exit code of a run that `error` ended: usage errors 2, cancellation 130, else 1. */
export function exitCodeForError(error: unknown): number {
  if (error instanceof PlanningError && error.cancelled) return EXIT_CANCELLED;
  if (USAGE_ERRORS.some((kind) => error instanceof kind)) return EXIT_USAGE;
  return EXIT_FAILURE;
}

/** The exit code of a plan run: 130 when cancelled, 0 when every node succeeded, else 1. */
export function planExitCode(state: PlanState, cancelled: boolean): number {
  if (cancelled) return EXIT_CANCELLED;
  return Object.values(state.runs).every((run) => run.state === "SUCCEEDED") ? 0 : EXIT_FAILURE;
}
