/**
 * The structures configuration keys hold (limits, providers, models, profiles, rules): plain
 * types, imported by the settings table and re-exported by `schema.ts`.
 */

/** The resource limits of one shell command (the `limits` key of a config file). */
export interface ResourceLimits {
  /**
   * Processes and threads at once (RLIMIT_NPROC inside bubblewrap's user namespace, so counted
   * per sandbox; the kernel does not apply RLIMIT_NPROC to root, so as root a pids cgroup holds
   * each run's commands to it where one can be made).
   */
  processes: number;
  /** Memory one process may allocate (RLIMIT_DATA: heap and private writable mappings), MiB. */
  memoryMb: number;
  /**
   * Memory all of a run's commands may use together (their processes, background ones included,
   * and what they put in their `/tmp` and `/dev/shm`), MiB: a memory cgroup per run, where one
   * can be made (as root), and never more than three quarters of the machine's memory (or of a container's limit).
   */
  totalMemoryMb: number;
  /** CPU time one process may use (RLIMIT_CPU), seconds. */
  cpuSeconds: number;
  /** Largest file a command may write (RLIMIT_FSIZE), MiB. */
  fileSizeMb: number;
  /** Size of the command's private `/tmp` (a tmpfs, fresh for each command), MiB. */
  tmpMb: number;
  /**
   * Longest a file tool call (read, grep, glob, …) may take in the tool worker, seconds; then
   * the worker is killed and replaced (a catastrophic regex cannot hang tern).
   */
  toolSeconds: number;
}

/** A provider in a config file: a new one, or changes to a preset of the same name. */
export interface ProviderSettings {
  /** The wire API: required for a new provider, inherited from a preset of the same name. */
  api?: "openai" | "openai-responses" | "anthropic";
  baseUrl?: string;
  /** The environment variable holding this provider's key (never the key itself). */
  apiKeyEnv?: string;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** The model used when this provider is chosen without `--model`. */
  defaultModel?: string;
  /**
   * How the Responses API (`api: "openai-responses"`) is reached: `sse` (default, one HTTP
   * request per round), `websocket` (one socket per conversation, each round's new input only,
   * HTTP when the socket fails) or `auto` (`websocket` at api.openai.com, else `sse`).
   */
  transport?: "auto" | "sse" | "websocket";
}

/** Catalog facts about a model, each optional; see ModelInfo in src/llm/model_info.ts. */
export interface ModelSettings {
  contextWindow?: number;
  maxOutputTokens?: number;
  /** `none` says the model does not think. */
  reasoning?: "effort" | "budget" | "none";
  minimalEffort?: boolean;
  images?: boolean;
  tools?: boolean;
  /** USD per million tokens. */
  price?: { input: number; output: number; cachedInput?: number; cacheWrite?: number };
}

/** A web search provider of `web_search`. */
export type WebSearchProviderName = "exa" | "tavily" | "brave" | "perplexity";

/** The `webSearch` key of a config file (the person's own files only). */
export interface WebSearchSettings {
  /** The provider asked first. */
  provider?: WebSearchProviderName;
  /** Providers asked in order when the ones before fail. */
  fallback?: WebSearchProviderName[];
  /**
   * The environment variable holding each provider's key (never the key itself). tern's
   * process reads only `TERN_*` variables and those named in `TERN_EXTRA_ENV`.
   */
  keyEnv?: Partial<Record<WebSearchProviderName, string>>;
  /** Keep results for get_search_content; default true. */
  cache?: boolean;
}

/** The `webFetch` key of a config file (the person's own files only). */
export interface WebFetchSettings {
  /**
   * A reader service asked for `<reader><url>` when a page cannot be fetched directly (e.g.
   * `https://r.jina.ai/`); none by default.
   */
  reader?: string;
  /** The environment variable holding the reader's key, if it takes one. */
  readerKeyEnv?: string;
}

/** The `sandbox` key of a config file. */
export interface SandboxSettings {
  /**
   * More paths of the home folder shell commands may see (read-only), besides the built-in
   * allowlist: `~/x` or absolute. Only from the person's own config file.
   */
  homeAllow?: string[];
}

/**
 * A custom sandbox profile: lists mapped 1:1 to Deno's `--allow-*` flags. Paths may use
 * `<workspace>`, `<tmp>` and `~/`; relative paths are relative to the workspace; `"*"` alone
 * grants everything of that kind.
 */
export interface CustomProfile {
  read?: string[];
  write?: string[];
  net?: string[];
  run?: string[];
  env?: string[];
}

/**
 * A permission rule. `command` is a shell command prefix in words (`"git push"`, `"npm *"`
 * with `*` for any one word) and implies the bash tool; `path` is a glob relative to the
 * workspace for file tools; `tool` alone matches every call of that tool. `match` and
 * `notMatch` are examples (commands, paths or tool names) checked when the rules load.
 */
export interface PermissionRule {
  action: "allow" | "ask" | "deny";
  tool?: string;
  command?: string;
  path?: string;
  match?: string[];
  notMatch?: string[];
  reason?: string;
  /**
   * The project file that holds the rule, set as the config loads (a config file cannot set it:
   * the file schema has no such key); absent for the person's own rules.
   */
  from?: string;
  /**
   * For `"tool": "request_permissions"` only: what the rule grants (allow) or refuses (deny).
   * An allow rule grants a request without review when it lists every path (or a folder
   * holding it), host, variable and command prefix asked for; it never grants running without
   * the sandbox. Paths may start with `~/` or `<workspace>`.
   */
  read?: string[];
  write?: string[];
  hosts?: string[];
  env?: string[];
  commands?: string[];
}

/**
 * Ranking weights of the code index set in config (`searchWeights`), each optional; see
 * `RankWeights` in src/index/rank.ts for what each does.
 */
export interface SearchWeights {
  bm25?: number;
  vector?: number;
  exactSymbol?: number;
  symbolWords?: number;
  vectorFloor?: number;
  kind?: Partial<Record<"FILE" | "CLASS" | "INTERFACE" | "FUNCTION" | "METHOD" | "WINDOW", number>>;
}

/**
 * An OpenAI-compatible `/embeddings` endpoint for the code index (the `indexEmbeddings` key, the
 * person's config only: a repository must not be able to send its reader's code elsewhere).
 */
export interface IndexEmbeddingSettings {
  /** The API's base URL; requests go to `<baseUrl>/embeddings`. */
  baseUrl: string;
  model: string;
  /** The environment variable holding the key (never the key itself). */
  apiKeyEnv?: string;
  /** Texts per request. */
  batchSize?: number;
}

/** A diagnostics checker of the person's config (`diagnostics.checkers`). */
export interface CheckerSettings {
  /** How it is named in results (`cargo`, `eslint`). */
  name: string;
  /** The extensions it checks, with the dot (`.rs`). */
  extensions: string[];
  /**
   * The shell command; `{file}` becomes the changed file's absolute path and `{workspace}`
   * the workspace's, both quoted. It runs in the workspace, in the sandbox.
   */
  command: string;
  /** How it prints findings (default `line`: `path:line:col: message`). */
  format?: "deno" | "tsc" | "bash" | "line";
}

/** A language server diagnostics may keep running (see src/harness/diagnostics/servers.ts). */
export type LanguageServerName =
  | "deno"
  | "typescript-language-server"
  | "pyright"
  | "gopls"
  | "rust-analyzer";

/**
 * The `diagnostics` key (the person's config only, except that a project may turn it off: it
 * names commands tern runs after edits without asking): checks of the files `write` and `edit`
 * change.
 */
export interface DiagnosticsSettings {
  /** Default true. */
  enabled?: boolean;
  /** Longest one check may take, in milliseconds (default 30,000). */
  timeoutMs?: number;
  /**
   * How long a change's result waits for its check, in milliseconds (default 10,000); a
   * later check's finding comes with a later tool result.
   */
  waitMs?: number;
  /** Checkers tried before the built-in ones, by extension. */
  checkers?: CheckerSettings[];
  /**
   * Language servers kept running for the session, found by the project's markers: true (the
   * default) for `deno` and `typescript-language-server`, false for none, or exactly those
   * named (`pyright`, `gopls` and `rust-analyzer` only so).
   */
  languageServers?: boolean | LanguageServerName[];
}
