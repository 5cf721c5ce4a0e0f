/**
 * The parts of zod tern uses, as named exports: import it as `import * as z from
 * "…/core/zod.ts"`. zod's own `z` is a namespace object that carries everything zod exports,
 * its 64 message locales included, so a bundle that imports it keeps all of them (a 760 KB
 * chunk, parsed by every run that validates a tool call); through these named exports the
 * bundler keeps only what is used (about a quarter of it). tests/cli/start_up_test.ts checks
 * that no source file imports zod any other way.
 */
export {
  array,
  boolean,
  discriminatedUnion,
  enum,
  fromJSONSchema,
  literal,
  looseObject,
  NEVER,
  number,
  object,
  partialRecord,
  record,
  strictObject,
  string,
  toJSONSchema,
  union,
  unknown,
  url,
  uuid,
  ZodError,
  ZodType,
} from "zod";
export type { core, infer, ZodOptional } from "zod";
