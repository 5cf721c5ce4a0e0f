/**
 * code_symbols' questions answered from the index's stored relations: definitions by symbol,
 * callers and implementations by the name as written (plain, qualified `x.name`, `X::name`,
 * `x->name`, or with type arguments `name<T>`), callees from the definitions' CALLS relations.
 */
import { globLiteral, type IndexStore } from "../index/store.ts";
import type { Chunk, Relation, RelationKind } from "../index/types.ts";
import type { SymbolAnswer, SymbolQuestion } from "../tools/code_index_access.ts";

/** The answers to `question` about `name`, at most `limit`, each chunk once. */
export function answerSymbols(
  store: IndexStore,
  name: string,
  question: SymbolQuestion,
  limit: number,
): SymbolAnswer[] {
  switch (question) {
    case "definitions":
      return store.definitions(name).slice(0, limit).map((chunk) => ({ chunk }));
    case "callers":
      return fromChunks(
        store,
        store.relationsMatching("CALLS", namePatterns(name), limit * 4),
        limit,
      );
    case "implementations":
      return fromChunks(
        store,
        [
          ...store.relationsMatching("EXTENDS", namePatterns(name), limit * 4),
          ...store.relationsMatching("IMPLEMENTS", namePatterns(name), limit * 4),
        ],
        limit,
      );
    case "importers":
      return fromChunks(
        store,
        store.relationsMatching("IMPORTS", modulePatterns(name), limit * 4),
        limit,
      );
    case "callees":
      return callees(store, name, limit);
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
function fromChunks(store: IndexStore, relations: Relation[], limit: number): SymbolAnswer[] {
  const answers: SymbolAnswer[] = [];
  const seen = new Set<string>();
  for (const relation of relations) {
    if (answers.length >= limit) break;
    const key = `${relation.from}\n${relation.kind}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const chunk = store.chunk(relation.from);
    if (chunk !== undefined) answers.push(answer(chunk, relation.kind, relation.name));
  }
  return answers;
}

/** Calls looked up at most for one callees question (each may scan the symbols). */
const MAX_CALL_LOOKUPS = 200;

/** What the definitions of `name` call, resolved to indexed definitions where possible. */
function callees(store: IndexStore, name: string, limit: number): SymbolAnswer[] {
  const answers: SymbolAnswer[] = [];
  const seen = new Set<string>();
  let lookups = 0;
  for (const definition of store.definitions(name)) {
    for (const call of store.relations({ kind: "CALLS", from: definition.id })) {
      // A name defined in hundreds of places must not turn one question into a full scan each.
      if (++lookups > MAX_CALL_LOOKUPS) return answers;
      const targets = call.to !== undefined
        ? [store.chunk(call.to)].filter((chunk): chunk is Chunk => chunk !== undefined)
        : store.definitions(call.name.split(/\??\.|::|->/).pop() ?? call.name);
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
