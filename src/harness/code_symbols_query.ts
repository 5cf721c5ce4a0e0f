/**
 * code_symbols' questions answered from the index's stored relations: definitions by symbol,
 * callers and implementations by the name as written (plain, qualified `x.name`, `X::name`,
 * `x->name`, or with type arguments `name<T>`), callees from the definitions' CALLS relations.
 * Every lookup goes through an index of the store (symbols' and names' last parts), and every
 * question has a time budget: node:sqlite runs on tern's main thread, where a question of
 * minutes would leave Ctrl-C and Esc unanswered.
 */
import { globLiteral, type IndexStore } from "../index/store.ts";
import { type Chunk, nameTail, type Relation, type RelationKind } from "../index/types.ts";
import type { SymbolAnswer, SymbolQuestion } from "../tools/code_index_access.ts";

/** How long one question may look things up, in milliseconds, unless told otherwise. */
export const SYMBOL_QUESTION_BUDGET_MS = 2_000;

/** The answers to one question; `partial` when its time budget ran out before all were found. */
export interface SymbolAnswers {
  answers: SymbolAnswer[];
  partial: boolean;
}

/**
 * The answers to `question` about `name`, at most `limit`, each chunk once. `deadline` (a
 * `performance.now()` time; default {@linkcode SYMBOL_QUESTION_BUDGET_MS} from now) is checked
 * between lookups: past it, what was found is answered with `partial` set.
 */
export function answerSymbols(
  store: IndexStore,
  name: string,
  question: SymbolQuestion,
  limit: number,
  deadline = performance.now() + SYMBOL_QUESTION_BUDGET_MS,
): SymbolAnswers {
  const clock = new Clock(deadline);
  const answers = ask(store, name, question, limit, clock);
  return { answers, partial: clock.over };
}

function ask(
  store: IndexStore,
  name: string,
  question: SymbolQuestion,
  limit: number,
  clock: Clock,
): SymbolAnswer[] {
  const tail = nameTail(name);
  // A name whose last part is empty ("x.", "<T>") is matched by its patterns alone.
  const byTail = tail === "" ? undefined : tail;
  switch (question) {
    case "definitions":
      return store.definitions(name, limit).map((chunk) => ({ chunk }));
    case "callers":
      return fromChunks(
        store,
        store.relationsMatching("CALLS", namePatterns(name), limit * 4, byTail),
        limit,
        clock,
      );
    case "implementations": {
      const extending = store.relationsMatching("EXTENDS", namePatterns(name), limit * 4, byTail);
      if (clock.passed()) return fromChunks(store, extending, limit, clock);
      return fromChunks(
        store,
        [
          ...extending,
          ...store.relationsMatching("IMPLEMENTS", namePatterns(name), limit * 4, byTail),
        ],
        limit,
        clock,
      );
    }
    case "importers":
      return fromChunks(
        store,
        store.relationsMatching("IMPORTS", modulePatterns(name), limit * 4),
        limit,
        clock,
      );
    case "callees":
      return callees(store, name, limit, clock);
  }
}

/** A question's deadline; `over` once a check found it passed. */
class Clock {
  over = false;
  constructor(readonly deadline: number) {}

  passed(): boolean {
    if (!this.over && performance.now() >= this.deadline) this.over = true;
    return this.over;
  }
}

/** `name` as written plain, qualified or with type arguments, as GLOB patterns. */
function namePatterns(name: string): string[] {
  const literal = globLiteral(name);
  return [literal, `*.${literal}`, `*::${literal}`, `*->${literal}`, `${literal}<*`];
}

/** A module as imported: exactly, or as the last part of a path with or without its extension. */
function modulePatterns(name: string): string[] {
  const literal = globLiteral(name);
  return [literal, `*/${literal}`, `*/${literal}.*`, `${literal}.*`];
}

/** The chunks the relations start from, each once, with the relation that links them. */
function fromChunks(
  store: IndexStore,
  relations: Relation[],
  limit: number,
  clock: Clock,
): SymbolAnswer[] {
  const answers: SymbolAnswer[] = [];
  const seen = new Set<string>();
  for (const relation of relations) {
    if (answers.length >= limit || clock.passed()) break;
    const key = `${relation.from}\n${relation.kind}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const chunk = store.chunk(relation.from);
    if (chunk !== undefined) answers.push(answer(chunk, relation.kind, relation.name));
  }
  return answers;
}

/** Calls looked up at most for one callees question. */
const MAX_CALL_LOOKUPS = 200;
/** Definitions of one called name looked at, at most: a name defined in thousands of places. */
const TARGETS_PER_CALL = 20;
/** Definitions of the asked name whose calls are looked at, at most. */
const MAX_DEFINITIONS = 50;

/** What the definitions of `name` call, resolved to indexed definitions where possible. */
function callees(store: IndexStore, name: string, limit: number, clock: Clock): SymbolAnswer[] {
  const answers: SymbolAnswer[] = [];
  const seen = new Set<string>();
  let lookups = 0;
  for (const definition of store.definitions(name, MAX_DEFINITIONS)) {
    if (clock.passed()) return answers;
    for (const call of store.relations({ kind: "CALLS", from: definition.id })) {
      if (++lookups > MAX_CALL_LOOKUPS || clock.passed()) return answers;
      const targets = call.to !== undefined
        ? [store.chunk(call.to)].filter((chunk): chunk is Chunk => chunk !== undefined)
        : store.definitions(nameTail(call.name) || call.name, TARGETS_PER_CALL);
      for (const target of targets) {
        if (answers.length >= limit) return answers;
        if (seen.has(target.id)) continue;
        seen.add(target.id);
        answers.push(answer(target, "CALLS", call.name));
      }
    }
  }
  return answers;
}

function answer(chunk: Chunk, relation: RelationKind, name: string): SymbolAnswer {
  return { chunk, relation, name };
}
