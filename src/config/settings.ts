/**
 * The settings table: every configuration key declared once, with its rule, default,
 * environment variables, command-line flag and help line, and whether a project's files may set
 * it. The config types (`Settings`, `TernConfig`), the environment and flag layers, the
 * validation messages, the project check and the option lines of `tern --help` all come from
 * here. Imports only types, so the command line reads it at start-up for nothing.
 */
import { type LayerValue, type ResolvedValue, type Rule, structured } from "./rules.ts";
import type {
  CustomProfile,
  DiagnosticsSettings,
  IndexEmbeddingSettings,
  ModelSettings,
  PermissionRule,
  ProviderSettings,
  ResourceLimits,
  SandboxSettings,
  SearchWeights,
  WebFetchSettings,
  WebSearchSettings,
} from "./types.ts";

/**
 * Why a project may not set a key: it would change who approves tool calls (`review`), widen
 * what sandboxed commands see (`sandbox`), decide which server receives the person's API keys
 * (`keys`) or which code the agent's searches put first (`ranking`).
 */
export type Guard = "review" | "sandbox" | "keys" | "ranking" | "checkpoints";

/** A command-line flag of a setting. */
export interface SettingFlag {
  /** The long name, without `--`. */
  name: string;
  /** The one-letter short name, without `-`. */
  short?: string;
  /** The value's placeholder in `--help` (`<n>`); none for a boolean flag. */
  arg?: string;
  /** The help line (wrapped by `--help`). */
  help: string;
}

/** One row of the table. */
export interface Setting {
  rule: Rule;
  /** The built-in default; none means unset unless a layer sets it. */
  default?: unknown;
  /** Environment variables (process and `.env`) that set it, the first set one winning. */
  env?: readonly string[];
  flag?: SettingFlag;
  /** What it accepts, as it reads after "expected" in an error message. */
  expect: string;
  /**
   * Whether a project's `.tern/config.jsonc` and `.env` (they arrive with a cloned repository)
   * may set it: `true`; `false`, only the person may (`guards` says why); `"narrower"`, only
   * values that narrow what tern may do (`narrow` refuses the others, or the merge keeps the
   * narrower value).
   */
  project: boolean | "narrower";
  guards?: Guard;
  /** For `project: "narrower"`: why a project's value is refused, or undefined when it is not. */
  narrow?: (value: unknown) => string | undefined;
  /**
   * For a `project: "narrower"` choice or boolean: its values from the narrowest to the widest,
   * so that a project's value wider than the person's keeps the person's (numbers need none:
   * the lower is the narrower).
   */
  order?: readonly unknown[];
  /** A rejected value is never echoed: it may hold a secret. */
  secret?: boolean;
}

/** Profiles a project may choose; anything wider needs the user's config, env or a flag. */
export const PROJECT_PROFILES: ReadonlySet<string> = new Set([":read-only", ":workspace"]);

/**
 * The default limits: 1,024 processes, 8 GiB of memory per process and 16 GiB for all of a run's
 * commands, 30 CPU minutes per process, 1 GiB per file, a 1 GiB `/tmp`, and 2 minutes per file
 * tool call.
 */
export const DEFAULT_LIMITS: Readonly<ResourceLimits> = {
  processes: 1024,
  memoryMb: 8192,
  totalMemoryMb: 16384,
  cpuSeconds: 1800,
  fileSizeMb: 1024,
  tmpMb: 1024,
  toolSeconds: 120,
};

/**
 * The longest time a millisecond setting may give: what a timer holds (2^31 - 1 ms, about 24.8
 * days). A timer given more fires at once, so a larger value (a repository's "35 days") would
 * end every wait as it starts, and tern would say it had waited that long.
 */
const MAX_MS = 2_147_483_647;
const MS = `an integer from 1 to ${MAX_MS} (milliseconds)`;
/** The default of `maxRounds`, model calls in one turn: a project's files may lower it, not raise it. */
const MAX_ROUNDS = 25;
/** The default subagents at once and time limit: what a project's files may lower, not raise. */
const SUBAGENTS = 4;
const PLAN_NODES = 2;
const SUBAGENT_MS = 600_000;
const ESCALATION_MS = 300_000;
/**
 * The most output tokens a project may ask for per model call: what tern asks for when it must
 * name a number (Anthropic's API), so a project's value never spends more than no value would.
 */
const PROJECT_MAX_TOKENS = 8192;
/** Defaults a project's files may lower, not raise: each spends the person's money or time. */
const REVIEW_MS = 30_000;
const REQUEST_MS = 1_800_000;
const IDLE_MS = 120_000;
const CONTEXT_WINDOW = 128_000;
const COMPACT_AT = 0.8;
const TOOL_RESULT_CHARS = 30_000;
const MEMORY_FACTS = 5;
const MAX_RETRIES = 4;
const RETRY_BASE_MS = 500;

/**
 * A `narrow` that refuses a project's number above `most`, saying why with `what` (the value
 * and its unit, `"40 model calls a turn"`).
 */
function atMost(
  most: number,
  what: (value: unknown) => string,
  than = `the default ${most}`,
): (value: unknown) => string | undefined {
  return (value) => Number(value) > most ? `${what(value)} is more than ${than}` : undefined;
}

/** A `narrow` that refuses a project's value wider than `most` in `order` (narrowest first). */
function noWider(
  order: readonly unknown[],
  most: unknown,
  what: (value: unknown) => string,
): (value: unknown) => string | undefined {
  return (value) => order.indexOf(value) > order.indexOf(most) ? what(value) : undefined;
}

/** The table. Keys with a flag come first, in the order `--help` lists them. */
export const SETTINGS = {
  /**
   * Model name sent to the provider. A project may choose it (a repository made for one model):
   * the price tern shows is the person's (a project may not set `models.*.price`), and a
   * provider or base URL a project chose gets none of the person's keys.
   */
  model: {
    rule: { kind: "text" },
    default: "gpt-4.1-mini",
    env: ["TERN_MODEL"],
    flag: {
      name: "model",
      short: "m",
      arg: "<name>",
      help: "model name (a catalog model alone picks its provider)",
    },
    expect: "a non-empty string",
    project: true,
  },
  /**
   * The provider to use: a name from `providers`, a preset (`openai`, `anthropic`, `ollama`,
   * …) or an API style (`openai`, `openai-responses`, `anthropic`). Unset: the model's
   * provider in the catalog, else an OpenAI-compatible API at `baseUrl`. A project's choice
   * gets only keys from the project's `.env`.
   */
  provider: {
    rule: { kind: "text" },
    env: ["TERN_PROVIDER"],
    flag: {
      name: "provider",
      arg: "<name>",
      help: "a provider from config, a preset (openai, openai-responses, anthropic, " +
        "openrouter, ollama, lmstudio, vllm, llamacpp) or an API style (openai, " +
        "openai-responses, anthropic)",
    },
    expect: 'a provider name (from "providers", a preset such as "anthropic" or "ollama", ' +
      'or an API style: "openai", "openai-responses", "anthropic")',
    project: true,
  },
  /**
   * Provider base URL, http or https, without a trailing slash. A project's choice gets only
   * keys from the project's `.env`.
   */
  baseUrl: {
    rule: { kind: "url" },
    default: "https://api.openai.com/v1",
    env: ["TERN_BASE_URL", "OPENAI_BASE_URL"],
    flag: {
      name: "base-url",
      arg: "<url>",
      help: "the provider's API base URL (e.g. http://127.0.0.1:8080/v1)",
    },
    expect: "an http or https URL",
    project: true,
  },
  /**
   * How hard thinking models think; models without thinking get nothing. A project may only
   * lower it: thinking tokens are output the person pays for.
   */
  thinking: {
    rule: { kind: "choice", values: ["off", "low", "medium", "high"] },
    default: "medium",
    env: ["TERN_THINKING"],
    flag: {
      name: "thinking",
      arg: "<level>",
      help: "off, low, medium (default) or high; models without thinking get none",
    },
    expect: '"off", "low", "medium" or "high"',
    project: "narrower",
    order: ["off", "low", "medium", "high"],
    narrow: noWider(
      ["off", "low", "medium", "high"],
      "medium",
      (value) => `thinking "${value}" spends more than the default "medium"`,
    ),
  },
  /** `provider/model` pairs tried in order when the main one keeps failing. */
  fallback: {
    rule: { kind: "list" },
    default: [],
    env: ["TERN_FALLBACK"],
    flag: {
      name: "fallback",
      arg: "<list>",
      help: "provider/model pairs tried in order when the model keeps failing " +
        "(comma-separated)",
    },
    expect: 'a list of "provider/model" pairs (comma-separated in the environment)',
    project: false,
    guards: "keys",
  },
  /**
   * Maximum model rounds in one turn (1 to 1000). A project may only lower it: each round is a
   * model call the person pays for, and a repository that raised it would let a loop its files
   * provoke run forty times longer.
   */
  maxRounds: {
    rule: { kind: "integer", min: 1, max: 1000 },
    default: MAX_ROUNDS,
    env: ["TERN_MAX_ROUNDS"],
    flag: { name: "max-rounds", arg: "<n>", help: "model calls allowed per turn (default 25)" },
    expect: "an integer from 1 to 1000",
    project: "narrower",
    narrow: (value) =>
      Number(value) > MAX_ROUNDS
        ? `${value} model calls a turn is more than the default ${MAX_ROUNDS}`
        : undefined,
  },
  /**
   * Maximum output tokens per model request; unset lets the provider decide. A project may set
   * at most 8192 (what tern asks for when it must name a number): output is what costs most.
   */
  maxTokens: {
    rule: { kind: "integer", min: 1 },
    env: ["TERN_MAX_TOKENS"],
    flag: { name: "max-tokens", arg: "<n>", help: "output token limit per model call" },
    expect: "a positive integer",
    project: "narrower",
    narrow: atMost(
      PROJECT_MAX_TOKENS,
      (value) => `${value} output tokens a call`,
      `${PROJECT_MAX_TOKENS}, the most a project may ask for`,
    ),
  },
  /** Sampling temperature from 0 to 2; unset lets the provider decide. Harmless: costs nothing. */
  temperature: {
    rule: { kind: "number", min: 0, max: 2 },
    env: ["TERN_TEMPERATURE"],
    flag: { name: "temperature", arg: "<t>", help: "sampling temperature, 0 to 2" },
    expect: "a number from 0 to 2",
    project: true,
  },
  /** Sandbox profile: a built-in (`:workspace`, ...) or a name from `profiles`. */
  profile: {
    rule: { kind: "text" },
    default: ":workspace",
    env: ["TERN_PROFILE"],
    flag: {
      name: "profile",
      short: "s",
      arg: "<name>",
      help: "sandbox profile: :read-only, :workspace (default), :external (workspace + " +
        "network), :danger-full-access, or a custom one",
    },
    expect: 'a sandbox profile name (":read-only", ":workspace", ":external", ' +
      '":danger-full-access" or one of "profiles")',
    project: "narrower",
    narrow: (value) =>
      PROJECT_PROFILES.has(String(value))
        ? undefined
        : `profile "${value}" is wider than ":workspace"`,
  },
  /** Who approves a call the profile and rules leave open: a person, a reviewer model, nobody. */
  mode: {
    rule: { kind: "choice", values: ["ask", "auto", "bypass"] },
    default: "ask",
    env: ["TERN_MODE"],
    flag: {
      name: "mode",
      arg: "<mode>",
      help: "who approves calls the profile and rules leave open: ask (default, a person; " +
        "denied when not interactive), auto (a reviewer model), bypass (no review; the " +
        "sandbox still applies)",
    },
    expect: '"ask", "auto" or "bypass"',
    project: false,
    guards: "review",
  },
  /** Run tools with no sandbox at all (no worker confinement, no bubblewrap). Review still applies. */
  noSandbox: {
    rule: { kind: "boolean" },
    default: false,
    env: ["TERN_NO_SANDBOX"],
    flag: { name: "no-sandbox", help: "run tools with no sandbox at all (review still applies)" },
    expect: "true or false (in the environment: 1, 0, true, false, yes or no)",
    project: false,
    guards: "sandbox",
  },
  /**
   * In AUTO mode, who may widen the sandbox: decide a call that reaches a host the profile gives
   * no network to (a `web_fetch` under `:workspace`), or a `request_permissions` grant. The
   * reviewer model, a person only, or nobody (refused; grants as in BYPASS). A
   * subagent gets the one its parent's mode implies (a BYPASS parent's children refuse, an ASK
   * parent's ask its person): a child reviews its calls in AUTO, and must not reach further
   * than its parent could.
   */
  autoNetwork: {
    rule: { kind: "choice", values: ["reviewer", "person", "never"] },
    default: "reviewer",
    env: ["TERN_AUTO_NETWORK"],
    flag: {
      name: "auto-network",
      arg: "<who>",
      help: "in auto mode, who may widen the sandbox (a host the profile gives no network " +
        "to, request_permissions): reviewer (default), person, never",
    },
    expect: '"reviewer", "person" or "never"',
    project: false,
    guards: "review",
  },
  /**
   * In AUTO mode, who answers a call one of the person's "ask" rules matches: the reviewer
   * model, or a person only (denied when nobody can be asked). A subagent of an ASK session
   * gets "person", of an AUTO session its parent's: a child reviews its calls in AUTO, and
   * must not leave to its reviewer what its parent leaves to the person.
   */
  autoAskRules: {
    rule: { kind: "choice", values: ["reviewer", "person"] },
    default: "reviewer",
    env: ["TERN_AUTO_ASK_RULES"],
    flag: {
      name: "auto-ask-rules",
      arg: "<who>",
      help: 'in auto mode, who answers a call an "ask" rule matches: reviewer (default) or ' +
        "person (denied when nobody can be asked)",
    },
    expect: '"reviewer" or "person"',
    project: false,
    guards: "review",
  },
  /** Model for the AUTO reviewer; unset means the main model. */
  reviewModel: {
    rule: { kind: "text" },
    env: ["TERN_REVIEW_MODEL"],
    expect: "a non-empty string",
    project: false,
    guards: "review",
  },
  /**
   * Longest an AUTO review may take before it counts as a denial, in milliseconds. A project may
   * only lower it: a longer one holds the person's turn on a stalled reviewer.
   */
  reviewTimeoutMs: {
    rule: { kind: "integer", min: 1, max: MAX_MS },
    default: REVIEW_MS,
    env: ["TERN_REVIEW_TIMEOUT_MS"],
    expect: MS,
    project: "narrower",
    narrow: atMost(REVIEW_MS, (value) => `${value} ms a review`),
  },
  /**
   * The environment variable holding the main provider's key (never the key itself). Not in
   * the resolved config: the key it names is in `apiKey` and `apiKeys`.
   */
  apiKeyEnv: {
    rule: { kind: "envName" },
    expect: "the name of an environment variable that holds the key (not the key itself)",
    project: false,
    guards: "keys",
    secret: true,
  },
  /**
   * Whole-request timeout for a model call, in milliseconds: from the request to the stream's
   * last byte. 30 minutes: an answer at high thinking (tens of thousands of tokens) can take a
   * quarter of an hour; a stream that never ends (a stuck proxy, a hostile server) ends here.
   * A project may only lower it: a longer one lets a server it chose hold a call (and the
   * person's time) longer.
   */
  requestTimeoutMs: {
    rule: { kind: "integer", min: 1, max: MAX_MS },
    default: REQUEST_MS,
    env: ["TERN_REQUEST_TIMEOUT_MS"],
    expect: MS,
    project: "narrower",
    narrow: atMost(REQUEST_MS, (value) => `${value} ms a model call`),
  },
  /**
   * Longest silence allowed in a streamed response, and the longest wait for its headers, in
   * milliseconds; five of them without content (keep-alives only) end the call. A project may
   * only lower it, as `requestTimeoutMs`.
   */
  idleTimeoutMs: {
    rule: { kind: "integer", min: 1, max: MAX_MS },
    default: IDLE_MS,
    env: ["TERN_IDLE_TIMEOUT_MS"],
    expect: MS,
    project: "narrower",
    narrow: atMost(IDLE_MS, (value) => `${value} ms of silence`),
  },
  /**
   * Default timeout for one shell command, in milliseconds. Harmless from a project: the model
   * may give any call its own timeout up to the same maximum, and `limits` bound the command.
   */
  bashTimeoutMs: {
    rule: { kind: "integer", min: 1, max: MAX_MS },
    default: 120_000,
    env: ["TERN_BASH_TIMEOUT_MS"],
    expect: MS,
    project: true,
  },
  /**
   * The model's context window in tokens; the budget compaction keeps the request under. A
   * project may only lower it: every request may grow to it, and each is paid for whole.
   */
  contextWindow: {
    rule: { kind: "integer", min: 4_000 },
    default: CONTEXT_WINDOW,
    env: ["TERN_CONTEXT_WINDOW"],
    expect: "an integer of at least 4000 (tokens)",
    project: "narrower",
    narrow: atMost(CONTEXT_WINDOW, (value) => `a window of ${value} tokens`),
  },
  /**
   * Compact before a model call once the request is over this fraction of the window. A project
   * may only lower it, as `contextWindow`.
   */
  compactAt: {
    rule: { kind: "number", min: 0.1, max: 0.95 },
    default: COMPACT_AT,
    env: ["TERN_COMPACT_AT"],
    expect: "a number from 0.1 to 0.95 (a fraction of the context window)",
    project: "narrower",
    narrow: atMost(COMPACT_AT, (value) => `compacting at ${value} of the window`),
  },
  /**
   * A tool result longer than this (characters) is saved to a file and previewed. At most a
   * million. A project may only lower it: each result up to it stays in every request.
   */
  toolResultChars: {
    rule: { kind: "integer", min: 2_000, max: 1_000_000 },
    default: TOOL_RESULT_CHARS,
    env: ["TERN_TOOL_RESULT_CHARS"],
    expect: "an integer from 2000 to 1000000 (characters)",
    project: "narrower",
    narrow: atMost(TOOL_RESULT_CHARS, (value) => `${value} characters a tool result`),
  },
  /**
   * Per-turn checkpoints (rewind): files larger than this (bytes) are left out and reported;
   * 0 turns checkpoints off. The person's alone: a repository that turned them off or left its
   * files out would take away what `/rewind` can bring back.
   */
  rewindMaxFileBytes: {
    rule: { kind: "integer", min: 0 },
    default: 10_485_760,
    env: ["TERN_REWIND_MAX_FILE_BYTES"],
    expect: "an integer of at least 0 (bytes; 0: no checkpoints)",
    project: false,
    guards: "checkpoints",
  },
  /**
   * Per-turn checkpoints (rewind): most files one checkpoint reads, the first in a workspace
   * included (it reads every file); past it the checkpoint fails and is told. The person's
   * alone: a repository that lowered it would turn checkpoints off, and one that raised it
   * could make each turn read that many files.
   */
  rewindMaxFiles: {
    rule: { kind: "integer", min: 1, max: 10_000_000 },
    default: 100_000,
    env: ["TERN_REWIND_MAX_FILES"],
    expect: "an integer from 1 to 10000000 (files)",
    project: false,
    guards: "checkpoints",
  },
  /**
   * Remembered facts sent with a message: the most relevant ones (BM25), 0 for none. A project
   * may only lower it: the facts are the person's, and go to the model's server.
   */
  memoryFacts: {
    rule: { kind: "integer", min: 0, max: 100 },
    default: MEMORY_FACTS,
    env: ["TERN_MEMORY_FACTS"],
    expect: "an integer from 0 to 100 (facts)",
    project: "narrower",
    narrow: atMost(MEMORY_FACTS, (value) => `${value} remembered facts a message`),
  },
  /**
   * Retries of one provider/model on 429, 5xx and dropped connections before it fails. A
   * project may only lower it: each retry is another call and another wait.
   */
  maxRetries: {
    rule: { kind: "integer", min: 0, max: 10 },
    default: MAX_RETRIES,
    env: ["TERN_MAX_RETRIES"],
    expect: "an integer from 0 to 10",
    project: "narrower",
    narrow: atMost(MAX_RETRIES, (value) => `${value} retries`),
  },
  /**
   * The first retry's backoff in milliseconds; doubled each time, with jitter. A project may
   * only lower it: a longer one holds the person's turn (24 days at most).
   */
  retryBaseMs: {
    rule: { kind: "integer", min: 1, max: MAX_MS },
    default: RETRY_BASE_MS,
    env: ["TERN_RETRY_BASE_MS"],
    expect: MS,
    project: "narrower",
    narrow: atMost(RETRY_BASE_MS, (value) => `${value} ms before the first retry`),
  },
  /**
   * MCP tools sent as an index plus `tool_search` instead of their schemas: when the schemas
   * would take over a tenth of the context window (`auto`), always, or never. A project may not
   * choose `never`: it sends every schema with every request.
   */
  mcpToolSearch: {
    rule: { kind: "choice", values: ["auto", "always", "never"] },
    default: "auto",
    env: ["TERN_MCP_TOOL_SEARCH"],
    expect: '"auto", "always" or "never"',
    project: "narrower",
    order: ["always", "auto", "never"],
    narrow: noWider(
      ["always", "auto", "never"],
      "auto",
      () => '"never" sends every MCP tool\'s schema with every request',
    ),
  },
  /**
   * Plan nodes run at once by `tern plan` (each a ReAct worker); a project may only lower it, as
   * with subagents: each worker costs model calls and a sandbox.
   */
  planConcurrency: {
    rule: { kind: "integer", min: 1, max: 16 },
    default: PLAN_NODES,
    env: ["TERN_PLAN_CONCURRENCY"],
    expect: "an integer from 1 to 16 (plan nodes run at once)",
    project: "narrower",
    narrow: (value) =>
      Number(value) > PLAN_NODES
        ? `${value} plan nodes at once is more than the default ${PLAN_NODES}`
        : undefined,
  },
  /**
   * Subagents (spawn_agent) running at once; 0 offers the model no subagent tools. A project may
   * only lower it.
   */
  maxSubagents: {
    rule: { kind: "integer", min: 0, max: 16 },
    default: SUBAGENTS,
    env: ["TERN_MAX_SUBAGENTS"],
    expect: "an integer from 0 to 16 (subagents run at once; 0: none)",
    project: "narrower",
    narrow: (value) =>
      Number(value) > SUBAGENTS
        ? `${value} subagents at once is more than the default ${SUBAGENTS}`
        : undefined,
  },
  /** Longest a subagent may run before it is stopped, in milliseconds; a project may only lower it. */
  subagentTimeoutMs: {
    rule: { kind: "integer", min: 1, max: MAX_MS },
    default: SUBAGENT_MS,
    env: ["TERN_SUBAGENT_TIMEOUT_MS"],
    expect: MS,
    project: "narrower",
    narrow: (value) =>
      Number(value) > SUBAGENT_MS
        ? `${value} ms is longer than the default ${SUBAGENT_MS} ms a subagent may run`
        : undefined,
  },
  /**
   * Longest a subagent waits for its parent's answer to an escalated call, in milliseconds; a
   * project may only lower it (a repository cannot hold a child, and the person's question, open
   * longer than the person chose).
   */
  subagentEscalationTimeoutMs: {
    rule: { kind: "integer", min: 1, max: MAX_MS },
    default: ESCALATION_MS,
    env: ["TERN_SUBAGENT_ESCALATION_TIMEOUT_MS"],
    expect: MS,
    project: "narrower",
    narrow: (value) =>
      Number(value) > ESCALATION_MS
        ? `${value} ms is longer than the default ${ESCALATION_MS} ms a subagent waits for an answer`
        : undefined,
  },
  /**
   * Keep one idle `tern child` started ahead (after the session's first model request), so that
   * spawn_agent hands its task to a process that has loaded already. A project may turn it
   * off, not back on when the person turned it off: the idle process takes their memory.
   */
  subagentPrestart: {
    rule: { kind: "boolean" },
    default: true,
    env: ["TERN_SUBAGENT_PRESTART"],
    expect: "true or false (in the environment: 1, 0, true, false, yes or no)",
    project: "narrower",
    order: [false, true],
  },
  /** Custom sandbox profiles by name (the person's config files only). */
  profiles: {
    rule: structured<Record<string, CustomProfile>>(),
    default: {},
    expect: "an object of custom profiles by name",
    project: false,
    guards: "sandbox",
  },
  /**
   * The limits of each shell command (config files only): the person's config may raise or
   * lower them, a project's only lower them: a value above the default is refused, and one
   * above the person's own (lower) limit is ignored.
   */
  limits: {
    rule: structured<Partial<ResourceLimits>, ResourceLimits>(),
    default: DEFAULT_LIMITS,
    expect: "an object of limits",
    project: "narrower",
    narrow: (value) => {
      const raised = Object.entries(value as Partial<ResourceLimits>).find(([name, limit]) =>
        limit !== undefined && limit > DEFAULT_LIMITS[name as keyof ResourceLimits]
      );
      if (raised === undefined) return undefined;
      const [name, limit] = raised;
      return `limits.${name} ${limit} is more than the default ` +
        `${DEFAULT_LIMITS[name as keyof ResourceLimits]}`;
    },
  },
  /** Allow/ask/deny rules, user config first, then the project's (config files only). */
  rules: {
    rule: structured<PermissionRule[]>(),
    default: [],
    expect: "a list of rules",
    project: "narrower",
    narrow: (value) =>
      (value as PermissionRule[]).some((rule) => rule.action === "allow")
        ? "allow rules let calls skip review"
        : undefined,
  },
  /** Providers defined or adjusted in config files (the person's only). */
  providers: {
    rule: structured<Record<string, ProviderSettings>>(),
    default: {},
    expect: "an object of providers by name",
    project: false,
    guards: "keys",
  },
  /**
   * Model catalog overrides and additions, by `model` or `provider/model`. A project may describe
   * a model, not price it: the cost tern shows and records is what the person pays; nor give it
   * a window over the most `contextWindow` may be from a project (the window of the model in use
   * is the catalog's unless `contextWindow` is set).
   */
  models: {
    rule: structured<Record<string, ModelSettings>>(),
    default: {},
    expect: "an object of models by name",
    project: "narrower",
    narrow: (value) => {
      const models = Object.entries(value as Record<string, ModelSettings>);
      const priced = models.find(([, model]) => model?.price !== undefined);
      if (priced !== undefined) {
        return `models.${priced[0]}.price would set the cost tern shows for what you pay`;
      }
      const wide = models.find(([, model]) => (model?.contextWindow ?? 0) > CONTEXT_WINDOW);
      return wide === undefined
        ? undefined
        : `models.${wide[0]}.contextWindow ${wide[1].contextWindow} is more than the default ` +
          `contextWindow ${CONTEXT_WINDOW}`;
    },
  },
  /**
   * The code index's ranking weights (formula in src/index/rank.ts): any of `bm25`, `vector`,
   * `exactSymbol`, `symbolWords`, `vectorFloor` and `kind` (by chunk kind); the others keep
   * their defaults. The person's config files only: a repository could otherwise rank its
   * planted look-alikes above a real definition, steering the agent.
   */
  searchWeights: {
    rule: structured<SearchWeights>(),
    expect: "an object of ranking weights",
    project: false,
    guards: "ranking",
  },
  /** The code index's embeddings from an endpoint (the person's config files only). */
  indexEmbeddings: {
    rule: structured<IndexEmbeddingSettings>(),
    expect: "an object with baseUrl and model",
    project: false,
    guards: "keys",
  },
  /** What shell commands may see (the person's own config file only, never a project's). */
  sandbox: {
    rule: structured<SandboxSettings>(),
    default: {},
    expect: "an object",
    project: false,
    guards: "sandbox",
  },
  /**
   * web_search's providers, their order and the variables holding their keys (the person's
   * own config file only: a project must not choose who receives the person's keys).
   */
  webSearch: {
    rule: structured<WebSearchSettings>(),
    default: {},
    expect: "an object",
    project: false,
    guards: "keys",
  },
  /**
   * web_fetch's reader service and the variable holding its key (the person's own config file
   * only: a project must not choose a server that receives every URL and the person's key).
   */
  webFetch: {
    rule: structured<WebFetchSettings>(),
    default: {},
    expect: "an object",
    project: false,
    guards: "keys",
  },
  /**
   * Checks after `write` and `edit`. A project's file may only turn them off
   * (`{"enabled": false}`): a checker or language server is a command tern runs without
   * asking (a project's own checks are hooks, which need trust), and anything else it set
   * would replace the person's own `diagnostics` whole.
   */
  diagnostics: {
    rule: structured<DiagnosticsSettings>(),
    default: {},
    expect: "an object",
    project: "narrower",
    narrow: (value) => {
      const { enabled, checkers, languageServers } = value as DiagnosticsSettings;
      // Commands are refused even beside `enabled: false`: they would stay in the config.
      const field = checkers !== undefined
        ? "checkers"
        : languageServers !== undefined && languageServers !== false
        ? "languageServers"
        : undefined;
      if (field === undefined && enabled === false) return undefined;
      const what = field === undefined
        ? 'it would replace your own "diagnostics" whole'
        : `it names commands tern runs without asking ("${field}")`;
      return `${what}, and a project may only turn diagnostics off ({"enabled": false})`;
    },
  },
} as const satisfies Record<string, Setting>;

/** A key of the table. */
export type SettingKey = keyof typeof SETTINGS;

/** Every key, in table order. */
export const SETTING_KEYS = Object.keys(SETTINGS) as SettingKey[];

/** The row of `key`, typed as a plain {@linkcode Setting}. */
export function settingOf(key: SettingKey): Setting {
  return SETTINGS[key];
}

type Table = typeof SETTINGS;

/** Keys holding structures (`profiles`, `rules`, …), checked by the zod schema of files only. */
export type StructuredKey = {
  [K in SettingKey]: Table[K]["rule"] extends { kind: "structured" } ? K : never;
}[SettingKey];

/** The settings one layer contributes, already validated. */
export type Settings = { -readonly [K in SettingKey]?: LayerValue<Table[K]["rule"]> };

type DefaultedKey = { [K in SettingKey]: Table[K] extends { default: unknown } ? K : never }[
  SettingKey
];

/** The merged settings: keys with a default always set, the others optional. */
export type ResolvedSettings =
  & { -readonly [K in DefaultedKey]: ResolvedValue<Table[K]["rule"]> }
  & { -readonly [K in Exclude<SettingKey, DefaultedKey>]?: ResolvedValue<Table[K]["rule"]> };

/** The built-in defaults, the lowest layer. */
export const DEFAULTS = Object.fromEntries(
  SETTING_KEYS.flatMap((key) => {
    const row = settingOf(key);
    return "default" in row ? [[key, row.default]] : [];
  }),
) as { readonly [K in DefaultedKey]: ResolvedValue<Table[K]["rule"]> };

/** Keys with a command-line flag. */
export type FlagKey = {
  [K in SettingKey]: Table[K] extends { flag: SettingFlag } ? K : never;
}[SettingKey];

/** Keys with a command-line flag, in `--help` order. */
export const FLAG_KEYS = SETTING_KEYS.filter((key) =>
  settingOf(key).flag !== undefined
) as FlagKey[];

/**
 * Settings from the command line: the flag's text as given (checked when the config loads,
 * with one message for every layer), or a value of the setting's own type.
 */
export type ConfigFlags = {
  [K in FlagKey]?: string | LayerValue<Table[K]["rule"]>;
};
