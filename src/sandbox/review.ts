/**
 * Review: who settles a call the policy left at "ask". ASK asks a person (and denies when no
 * person can be asked), AUTO asks a bounded reviewer model (anything but a clean "allow" is a
 * denial, or goes to a person when one is there), BYPASS allows. Review never widens the
 * profile: it only decides calls the profile already makes possible.
 */
import type { ReviewMode } from "../config/schema.ts";
import { visibleText } from "../core/terminal_text.ts";

/** What a person or reviewer is shown. */
export interface ReviewRequest {
  tool: string;
  /** The arguments, secrets masked. */
  args: unknown;
  /** One line: the command, or the tool and its path. */
  summary: string;
  /** The call runs a shell command (`summary`); absent for other calls. */
  command?: true;
  /**
   * A shell call's allow rules that would cover it, as their `command` (one per simple command);
   * absent when none could.
   */
  allowCommands?: string[];
  /** A web tool's call reaching the network (`summary` says where); absent for other calls. */
  network?: true;
  /** Why it needs review (the policy's reason: risk label and parts). */
  reason: string;
  /**
   * The key masker hid part of the call's arguments: a key format can take in shell syntax
   * (`token=a1|touch$IFS~/x` is one `secret`, a private key's header hides every line after
   * it), so what is shown may not be all that runs. The AUTO reviewer never decides such a
   * call (a person does, or it is denied), and a person is told first.
   */
  hiddenKeys?: true;
  /**
   * What the model says the call is for (bash's `description`, request_permissions' `reason`),
   * secrets masked: its own words, unverified, shown after the facts and marked as such.
   */
  modelReason?: string;
  /**
   * What a rule or hook that asked says about it, with where it came from: an ask rule's
   * `reason` (perhaps the repository's own config), a PreToolUse hook's. Not tern's words: shown
   * after the facts, labelled with its source, made visible and cut short.
   */
  note?: AskNote;
  profile: string;
  /** Whether "allow for this session" can be offered (a safe approval key exists). */
  rememberable: boolean;
  /**
   * What "allow for this session" allows from then on, in words (`any "python3 …" command`):
   * the remembered key is a prefix, wider than the one call shown.
   */
  rememberAs?: string;
  /**
   * A grant's reach (`request_permissions`): allowing it widens the sandbox for the rest of the
   * turn or of the session, more than one call, so "allow" says which. Absent for other calls.
   */
  grantFor?: "turn" | "session";
}

/**
 * What the "allow" answer ("once") is called for `request`: `allow once`, or for a grant, how
 * long it lasts (`allow for this session`), so no front end offers a session's grant as once.
 */
export function allowLabel(request: Pick<ReviewRequest, "grantFor">): string {
  return request.grantFor === undefined ? "allow once" : `allow for this ${request.grantFor}`;
}

/** Text a rule or hook gave for asking, and who gave it (`ReviewRequest.note`). */
export interface AskNote {
  /** Who says it, in words: `the ask rule command "git push" in /repo/.tern/config.jsonc`. */
  from: string;
  /** What it says (may be empty: the rule gave no reason). */
  text: string;
}

/**
 * The first words of a note as a person is shown it: who gave it, made visible, and how the text
 * after it reads (unverified: a repository may have written it).
 */
export function noteLabel(note: AskNote): string {
  const from = visibleText(note.from.replace(/\s+/g, " ").trim());
  return note.text.trim() === ""
    ? `Asked by ${from}.`
    : `Asked by ${from}, which says (unverified):`;
}

/** A person's answer. */
export type PersonAnswer = "once" | "session" | "deny";

/** A person's denial with their words for the model (sent as the call's observation). */
export interface PersonDenial {
  deny: string;
}

/** What asking a person gives: an answer, or a denial with a reason. */
export type PersonReply = PersonAnswer | PersonDenial;

/** Asks the person at the terminal. Absent when the run is not interactive. */
export type AskPerson = (request: ReviewRequest, signal: AbortSignal) => Promise<PersonReply>;

/** `reply` without its reason: "deny" for a denial with one. */
export function answerOf(reply: PersonReply): PersonAnswer {
  return typeof reply === "object" ? "deny" : reply;
}

/** A reviewer's answer, already validated. */
export interface ReviewerAnswer {
  decision: "allow" | "deny";
  reason: string;
}

/**
 * The AUTO reviewer. Must settle within the signal's life; throwing, or resolving after the
 * signal fired, counts as a denial.
 */
export type Reviewer = (request: ReviewRequest, signal: AbortSignal) => Promise<ReviewerAnswer>;

/** How review settled a call. */
export interface ReviewOutcome {
  allow: boolean;
  by: "person" | "reviewer" | "bypass" | "policy";
  reason: string;
  /** The person chose "allow for this session". */
  remember: boolean;
}

export interface ReviewOptions {
  mode: ReviewMode;
  person?: AskPerson;
  reviewer?: Reviewer;
  /** Longest an AUTO review may take, in milliseconds. */
  reviewTimeoutMs: number;
  signal: AbortSignal;
}

/** Settles one "ask" verdict. Never throws. */
export async function review(
  request: ReviewRequest,
  options: ReviewOptions,
): Promise<ReviewOutcome> {
  if (options.mode === "bypass") {
    return { allow: true, by: "bypass", reason: "Review is bypassed", remember: false };
  }
  if (options.mode === "auto" && request.hiddenKeys) {
    // The reviewer would judge the masked text, not what runs.
    if (options.person !== undefined && !options.signal.aborted) {
      return await askPerson(request, options.person, options.signal);
    }
    return { allow: false, by: "reviewer", reason: HIDDEN_KEYS_DENIAL, remember: false };
  }
  if (options.mode === "auto") {
    const answer = await askReviewer(request, options);
    if (answer.ok) {
      return {
        allow: answer.decision === "allow",
        by: "reviewer",
        reason: answer.reason,
        remember: false,
      };
    }
    // A reviewer that failed decides nothing: a person decides if there is one, else deny.
    if (options.person === undefined || options.signal.aborted) {
      return { allow: false, by: "reviewer", reason: answer.reason, remember: false };
    }
    return await askPerson(request, options.person, options.signal);
  }
  if (options.person === undefined) {
    return { allow: false, by: "policy", reason: nonInteractiveDenial(request), remember: false };
  }
  return await askPerson(request, options.person, options.signal);
}

/** Why AUTO mode denies a call part of which is hidden as a key, with nobody to ask. */
export const HIDDEN_KEYS_DENIAL = "Not approved: part of this call looks like a key and is " +
  "hidden from review, so the reviewer cannot see all that would run, and no person is there " +
  "to ask: keep keys out of commands (have the command read them from a file the sandbox shows)";

/** The denial text for ASK mode without a terminal: says how to allow the call next time. */
export function nonInteractiveDenial(request: ReviewRequest): string {
  if (request.network) {
    return `Not approved: this run is not interactive and review mode is "ask" ` +
      `(${request.reason}). To allow web requests, run with --profile :external (the network ` +
      "for web tools and commands), or --mode auto to have the reviewer decide each one";
  }
  const prefix = `Not approved: this run is not interactive and review mode is "ask" ` +
    `(${request.reason}). To allow such calls, run with --mode auto or --mode bypass`;
  if (!request.command) {
    return `${prefix}, or add the rule {"action": "allow", "tool": ${
      JSON.stringify(request.tool)
    }} to "rules" in ~/.tern/config.jsonc`;
  }
  // Rules only worth naming if together they cover every part of the command.
  const commands = request.allowCommands;
  if (commands === undefined || commands.length === 0) {
    return `${prefix} (no allow rule can cover this command: it has parts a rule cannot name)`;
  }
  const rules = commands.map((command) =>
    `{"action": "allow", "command": ${JSON.stringify(command)}}`
  );
  return `${prefix}, or add ${rules.length === 1 ? "the rule" : "the rules"} ${
    rules.join(", ")
  } to "rules" in ~/.tern/config.jsonc`;
}

async function askPerson(
  request: ReviewRequest,
  person: AskPerson,
  signal: AbortSignal,
): Promise<ReviewOutcome> {
  try {
    const reply = await person(request, signal);
    if (typeof reply === "object") {
      const said = reply.deny.trim();
      const reason = said === "" ? "The user denied it" : `The user denied it, saying: ${said}`;
      return { allow: false, by: "person", reason, remember: false };
    }
    const answer = answerOf(reply);
    if (answer === "deny") {
      return { allow: false, by: "person", reason: "The user denied it", remember: false };
    }
    return {
      allow: true,
      by: "person",
      reason: answer === "session" ? "The user allowed it for this session" : "The user allowed it",
      remember: answer === "session",
    };
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { allow: false, by: "person", reason: `No answer (${detail})`, remember: false };
  }
}

type ReviewerResult = { ok: true; decision: "allow" | "deny"; reason: string } | {
  ok: false;
  reason: string;
};

async function askReviewer(
  request: ReviewRequest,
  options: ReviewOptions,
): Promise<ReviewerResult> {
  if (options.reviewer === undefined) {
    return { ok: false, reason: "Denied: no reviewer is configured for auto mode" };
  }
  // An abort that already happened fires no event: without this the reviewer could still allow.
  if (options.signal.aborted) return { ok: false, reason: "Denied: the review was interrupted" };
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  options.signal.addEventListener("abort", onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<ReviewerResult>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve({
        ok: false,
        reason: `Denied: the reviewer gave no answer within ${options.reviewTimeoutMs} ms`,
      });
    }, options.reviewTimeoutMs);
  });
  const answer = options.reviewer(request, controller.signal).then(
    (value): ReviewerResult => {
      if (controller.signal.aborted) {
        return { ok: false, reason: "Denied: the review was interrupted" };
      }
      if (value?.decision !== "allow" && value?.decision !== "deny") {
        return { ok: false, reason: "Denied: the reviewer's answer was not allow or deny" };
      }
      return { ok: true, decision: value.decision, reason: `Reviewer: ${value.reason}` };
    },
    (error): ReviewerResult => ({
      ok: false,
      reason: `Denied: the reviewer failed (${error instanceof Error ? error.message : error})`,
    }),
  );
  try {
    return await Promise.race([answer, timeout]);
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener("abort", onAbort);
  }
}
