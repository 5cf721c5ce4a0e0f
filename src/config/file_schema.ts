/**
 * The zod schema of a config file (`config.jsonc`): a strict object of the keys of the settings
 * table, each plain key checked by the same rule the environment and flags use, each structured
 * key (`profiles`, `rules`, …) by its schema here. Imported only for a config file that is more
 * than plain keys, so most runs never load zod.
 */
import * as z from "../core/zod.ts";
import { closestName } from "../core/edit_distance.ts";
import { costlyGlob } from "../core/glob_cost.ts";
import { hasHiddenCharacter } from "../core/terminal_text.ts";
import { checkRule, type Rule } from "./rules.ts";
import {
  SETTING_KEYS,
  type SettingKey,
  settingOf,
  type Settings,
  type StructuredKey,
} from "./settings.ts";

function fromRule(rule: Rule) {
  return z.unknown().transform((value, ctx) => {
    const checked = checkRule(rule, value);
    if (checked.ok) return checked.value;
    ctx.addIssue({ code: "custom", message: "invalid value" });
    return z.NEVER;
  }).optional();
}

const shape = Object.fromEntries(
  SETTING_KEYS.flatMap((key) => {
    const rule = settingOf(key).rule;
    return rule.kind === "structured" ? [] : [[key, fromRule(rule)]];
  }),
) as Record<SettingKey, ReturnType<typeof fromRule>>;

const entries = z.array(z.string().trim().min(1, "an entry is empty")).optional();

const customProfile = z.strictObject({
  read: entries,
  write: entries,
  net: entries,
  run: entries,
  env: entries,
});

const permissionRule = z.strictObject({
  action: z.enum(["allow", "ask", "deny"]),
  tool: z.string().trim().min(1).optional(),
  command: z.string().trim().min(1).optional(),
  // A pattern whose matching backtracks would hold every call's path check for minutes.
  path: z.string().trim().min(1).superRefine((pattern, ctx) => {
    const costly = costlyGlob(pattern);
    if (costly !== undefined) {
      ctx.addIssue({
        code: "custom",
        message: `the pattern ${costly}: its matching backtracks; use fewer`,
      });
    }
  }).optional(),
  match: z.array(z.string()).optional(),
  notMatch: z.array(z.string()).optional(),
  reason: z.string().optional(),
  read: entries,
  write: entries,
  hosts: entries,
  env: entries,
  commands: entries,
}).refine((rule) => rule.tool ?? rule.command ?? rule.path, {
  message: 'a rule needs "tool", "command" or "path"',
}).refine(
  (rule) =>
    rule.tool === "request_permissions" ||
    [rule.read, rule.write, rule.hosts, rule.env, rule.commands].every((l) => l === undefined),
  {
    message: '"read", "write", "hosts", "env" and "commands" need "tool": "request_permissions"',
  },
);

const profileName = z.string().regex(
  /^[A-Za-z0-9][A-Za-z0-9_.-]*$/,
  'a custom profile name is letters, digits, "_", "." or "-" (":" is for built-in profiles)',
);

const httpUrl = z.unknown().transform((value, ctx) => {
  const checked = checkRule(settingOf("baseUrl").rule, value);
  if (checked.ok) return checked.value;
  ctx.addIssue({ code: "custom", message: "expected an http or https URL" });
  return z.NEVER;
});

const envName = z.string().regex(
  /^[A-Za-z_][A-Za-z0-9_]*$/,
  "expected the name of an environment variable that holds the key (not the key itself)",
);

const providerSettings = z.strictObject({
  api: z.enum(["openai", "openai-responses", "anthropic"]).optional(),
  baseUrl: httpUrl.optional(),
  apiKeyEnv: envName.optional(),
  headers: z.record(z.string().min(1), z.string()).optional(),
  defaultModel: z.string().trim().min(1).optional(),
  transport: z.enum(["auto", "sse", "websocket"]).optional(),
});

const price = z.number().nonnegative();

const modelSettings = z.strictObject({
  contextWindow: z.number().int().min(1_000).optional(),
  maxOutputTokens: z.number().int().min(1).optional(),
  reasoning: z.enum(["effort", "budget", "none"]).optional(),
  minimalEffort: z.boolean().optional(),
  images: z.boolean().optional(),
  tools: z.boolean().optional(),
  price: z.strictObject({
    input: price,
    output: price,
    cachedInput: price.optional(),
    cacheWrite: price.optional(),
  }).optional(),
});

// As the `model` setting: a name that is not what it looks like would draw as another model's.
const modelName = z.string().trim().min(1).refine(
  (name) => !hasHiddenCharacter(name),
  "a model name has no line break, control, bidi or invisible character",
);

const providerName = z.string().regex(
  /^[A-Za-z0-9][A-Za-z0-9_.-]*$/,
  'a provider name is letters, digits, "_", "." or "-"',
);

/** One ranking weight: a finite number from -10 to 10. */
const weight = z.number().min(-10).max(10).optional();
const searchProvider = z.enum(["exa", "tavily", "brave", "perplexity"]);

/** The schema of each structured key of the table (a new one fails the type check here). */
const structuredShape: Record<StructuredKey, z.ZodType> = {
  profiles: z.record(profileName, customProfile).optional(),
  limits: z.strictObject({
    processes: z.number().int().min(1).optional(),
    memoryMb: z.number().int().min(1).optional(),
    totalMemoryMb: z.number().int().min(1).optional(),
    cpuSeconds: z.number().int().min(1).optional(),
    fileSizeMb: z.number().int().min(1).optional(),
    tmpMb: z.number().int().min(1).optional(),
    toolSeconds: z.number().int().min(1).optional(),
  }).optional(),
  rules: z.array(permissionRule).optional(),
  providers: z.record(providerName, providerSettings).optional(),
  models: z.record(modelName, modelSettings).optional(),
  sandbox: z.strictObject({ homeAllow: entries }).optional(),
  searchWeights: z.strictObject({
    bm25: weight,
    vector: weight,
    exactSymbol: weight,
    symbolWords: weight,
    vectorFloor: z.number().min(-1).max(1).optional(),
    kind: z.strictObject({
      FILE: weight,
      CLASS: weight,
      INTERFACE: weight,
      FUNCTION: weight,
      METHOD: weight,
      WINDOW: weight,
    }).optional(),
  }).optional(),
  webSearch: z.strictObject({
    provider: searchProvider.optional(),
    fallback: z.array(searchProvider).max(4).optional(),
    keyEnv: z.partialRecord(searchProvider, z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/))
      .optional(),
    cache: z.boolean().optional(),
  }).optional(),
  webFetch: z.strictObject({
    reader: z.url({ protocol: /^https?$/ }).regex(/\/$/, "the reader URL ends with /")
      .optional(),
    readerKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).optional(),
  }).optional(),
  diagnostics: z.strictObject({
    enabled: z.boolean().optional(),
    timeoutMs: z.number().int().min(1).optional(),
    waitMs: z.number().int().min(0).optional(),
    checkers: z.array(z.strictObject({
      name: z.string().trim().min(1),
      extensions: z.array(
        z.string().regex(/^\.[A-Za-z0-9_.+-]+$/, 'an extension with its dot (".rs")'),
      )
        .min(1),
      command: z.string().trim().min(1),
      format: z.enum(["deno", "tsc", "bash", "line"]).optional(),
    })).optional(),
    languageServers: z.union([
      z.boolean(),
      z.array(z.enum(["deno", "typescript-language-server", "pyright", "gopls", "rust-analyzer"])),
    ]).optional(),
  }).optional(),
  indexEmbeddings: z.strictObject({
    baseUrl: z.url({ protocol: /^https?$/ }),
    model: z.string().trim().min(1),
    apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "a variable name").optional(),
    batchSize: z.number().int().min(1).max(2048).optional(),
  }).optional(),
};

/** Every key optional, unknown keys rejected. */
export const configFileSchema: z.ZodType<Settings> = z.strictObject({
  ...shape,
  ...structuredShape,
}) as unknown as z.ZodType<Settings>;

/** The first issue of a failed parse, told as `describeFileIssue()` tells it. */
export interface FileIssue {
  /** `"key.path": message`, with a suggestion for a misspelt key. */
  detail: string;
  /** Where in the file's value the issue is: keys and array indexes. */
  path: PropertyKey[];
  /** The first unknown key of an object at `path`, when the issue is one. */
  unknownKey?: string;
  /** The issue is with the name of the last key of `path`, not with its value. */
  badName?: boolean;
}

/**
 * The first issue of a failed parse as "key.path: message". Names in it come from the file, a
 * repository's perhaps: each is quoted as JSON (a line break in a name cannot start a line of
 * its own) and cut to {@linkcode MAX_SHOWN_NAME} characters (a megabyte name is no message). An
 * unknown key gets the known key of that object it is closest to (`did you mean "processes"?`).
 */
export function describeFileIssue(error: z.ZodError): FileIssue {
  const issue = error.issues[0];
  if (issue === undefined) return { detail: "invalid configuration", path: [] };
  const path = issue.path;
  const where = path.length > 0 ? `${quotedName(path.map(String).join("."))}: ` : "";
  if (issue.code === "unrecognized_keys") {
    const keys = issue.keys.map(quotedName).join(", ");
    const [first] = issue.keys;
    const meant = first === undefined ? undefined : closestName(first, keysAt(path), 3);
    const hint = meant === undefined ? "" : `: did you mean ${quotedName(meant)}?`;
    const detail = `${where}Unrecognized key${issue.keys.length === 1 ? "" : "s"}: ${keys}${hint}`;
    return { detail, path, unknownKey: first };
  }
  // A bad record key reports "Invalid key in record"; the reason is in the nested issue.
  if (issue.code === "invalid_key") {
    return { detail: `${where}${issue.issues[0]?.message ?? issue.message}`, path, badName: true };
  }
  return { detail: `${where}${issue.message}`, path };
}

/** What of a zod schema `keysAt()` reads: its definition. */
interface SchemaDef {
  type: string;
  innerType?: SchemaLike;
  shape?: Record<string, SchemaLike>;
  valueType?: SchemaLike;
  element?: SchemaLike;
}
type SchemaLike = { _zod: { def: SchemaDef } };

/**
 * The keys the file schema knows for the object at `path` (a record's entries and a list's
 * items passed through); none when no strict object is there. Never throws.
 */
function keysAt(path: readonly PropertyKey[]): string[] {
  let schema: SchemaLike | undefined = configFileSchema as unknown as SchemaLike;
  const unwrap = () => {
    while (schema?._zod.def.type === "optional") schema = schema._zod.def.innerType;
  };
  for (const step of path) {
    unwrap();
    const def: SchemaDef | undefined = schema?._zod.def;
    if (def?.type === "object") schema = def.shape?.[String(step)];
    else if (def?.type === "record") schema = def.valueType;
    else if (def?.type === "array") schema = def.element;
    else return [];
  }
  unwrap();
  return Object.keys(schema?._zod.def.type === "object" ? schema._zod.def.shape ?? {} : {});
}

/** The most characters of a name from a config file that a message shows. */
const MAX_SHOWN_NAME = 80;

function quotedName(name: string): string {
  return JSON.stringify(name.length > MAX_SHOWN_NAME ? `${name.slice(0, MAX_SHOWN_NAME)}…` : name);
}
