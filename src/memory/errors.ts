/** Errors of remembered facts that the person can act on; both are bad usage. */
import { TernError } from "../core/errors.ts";

/** A fact to remember that is empty or too long. */
export class FactTextError extends TernError {
  override name = "FactTextError";
  /** The text's length in characters (code points) after whitespace is collapsed. */
  readonly length: number;

  constructor(message: string, length: number) {
    super(message);
    this.length = length;
  }
}

/** A fact id (prefix) to forget that is empty, matches no fact, or matches several. */
export class FactIdError extends TernError {
  override name = "FactIdError";
  /** The id prefix as given. */
  readonly idPrefix: string;
  /** The ids of the facts it matched: empty when it matched none. */
  readonly matches: readonly string[];

  constructor(message: string, idPrefix: string, matches: string[] = []) {
    super(message);
    this.idPrefix = idPrefix;
    this.matches = matches;
  }
}

/** A prompt template that is unknown, or an argument of one that is unknown or missing. */
export class TemplateError extends TernError {
  override name = "TemplateError";
}

/** A skill asked for by name that no skills folder has. */
export class UnknownSkillError extends TernError {
  override name = "UnknownSkillError";
}

/** A consolidation id to undo that matches none, several, or one that cannot be undone. */
export class ConsolidationIdError extends TernError {
  override name = "ConsolidationIdError";
}
