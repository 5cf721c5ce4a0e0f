import { equal } from "node:assert/strict";
import { InputError, UsageError } from "../../src/cli/errors.ts";
import {
  EXIT_CANCELLED,
  EXIT_USAGE,
  exitCodeFor,
  exitCodeForError,
} from "../../src/cli/exit_codes.ts";
import { ConfigError } from "../../src/config/errors.ts";
import { TernError } from "../../src/core/errors.ts";
import { NoPlanError, SessionChoiceError } from "../../src/harness/errors.ts";
import { ProviderSetupError } from "../../src/llm/errors.ts";
import { FactIdError, FactTextError } from "../../src/memory/errors.ts";
import { PlanningError, PlanValidationError } from "../../src/plan/errors.ts";
import {
  SessionBusyError,
  SessionFileError,
  SessionRefError,
  UnknownEntryError,
} from "../../src/session/errors.ts";

Deno.test("exitCodeForError() gives every domain's usage error exit code 2", () => {
  const usage = [
    new UsageError("bad flag"),
    new InputError("unknown tool"),
    new ConfigError("bad config", { key: "maxRounds" }),
    new ProviderSetupError("no key"),
    new SessionChoiceError("nothing to continue"),
    new NoPlanError("no plan"),
    new SessionBusyError("abcd1234", "/s/x_abcd1234.jsonl"),
    new SessionRefError("no match", "beef"),
    new SessionFileError("not a session", "/etc/passwd"),
    new UnknownEntryError("abcd1234", "e1"),
    new FactTextError("empty", 0),
    new FactIdError("no fact", "ff"),
  ];
  for (const error of usage) equal(exitCodeForError(error), EXIT_USAGE, error.name);
});

Deno.test("exitCodeForError() gives a cancelled plan 130 and other failures 1", () => {
  equal(exitCodeForError(new PlanningError("Cannot plan: cancelled", { cancelled: true })), 130);
  equal(exitCodeForError(new PlanningError("Cannot plan: rejected twice")), 1);
  equal(exitCodeForError(new PlanValidationError(["cycle: a → b → a"])), 1);
  equal(exitCodeForError(new TernError("Cannot reach the model server")), 1);
  equal(exitCodeForError(new Error("a bug")), 1);
  equal(exitCodeFor("CANCELLED"), EXIT_CANCELLED);
});

Deno.test("SessionBusyError carries the session's id and file, not an exit code", () => {
  const error = new SessionBusyError("abcd1234", "/s/x_abcd1234.jsonl");
  equal(error.sessionId, "abcd1234");
  equal(error.path, "/s/x_abcd1234.jsonl");
  equal("exitCode" in error, false);
  equal(
    error.message,
    'Session "abcd1234" is in use by another tern process (/s/x_abcd1234.jsonl): wait for it ' +
      "to finish, or fork it with `tern sessions fork abcd1234`",
  );
});
