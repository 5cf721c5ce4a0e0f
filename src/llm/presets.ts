/**
 * Provider presets: where each well-known API lives, which wire style it speaks, where its key
 * comes from and which model to use when none is named. Configuration may override any field;
 * these are only the defaults a bare `--provider ollama` starts from.
 */
import type { ApiStyle } from "./model_info.ts";

/** One ready-made provider setup. */
export interface ProviderPreset {
  /** The preset's name, also the `provider` of its catalog entries. */
  name: string;
  api: ApiStyle;
  /** API root including the version, without a trailing `/`. */
  baseUrl: string;
  /** The environment variable the key is read from, if the API takes one. */
  keyEnv?: string;
  /** True when requests fail without a key. */
  keyRequired: boolean;
  /** True for servers on this machine (no key, no price, nothing leaves the host). */
  local: boolean;
  /** Chat Completions dialect; only for `api: "openai"`. */
  chat?: {
    maxTokensField?: "max_tokens" | "max_completion_tokens";
    reasoningField?: "reasoning_effort" | "reasoning";
    promptCacheKey?: boolean;
  };
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** The model used when none is configured. */
  defaultModel: string;
  /** One line for help text. */
  description: string;
}

const LOCAL_CHAT = { maxTokensField: "max_tokens", reasoningField: "reasoning_effort" } as const;

/** The built-in presets by name. */
export const PROVIDER_PRESETS: Readonly<Record<string, ProviderPreset>> = Object.freeze({
  "openai": {
    name: "openai",
    api: "openai",
    baseUrl: "https://api.openai.com/v1",
    keyEnv: "OPENAI_API_KEY",
    keyRequired: true,
    local: false,
    // OpenAI's reasoning models reject `max_tokens`.
    chat: {
      maxTokensField: "max_completion_tokens",
      reasoningField: "reasoning_effort",
      promptCacheKey: true,
    },
    defaultModel: "gpt-5",
    description: "OpenAI Chat Completions API",
  },
  "openai-responses": {
    name: "openai-responses",
    api: "openai-responses",
    baseUrl: "https://api.openai.com/v1",
    keyEnv: "OPENAI_API_KEY",
    keyRequired: true,
    local: false,
    defaultModel: "gpt-5",
    description: "OpenAI Responses API (keeps reasoning between calls)",
  },
  "anthropic": {
    name: "anthropic",
    api: "anthropic",
    baseUrl: "https://api.anthropic.com/v1",
    keyEnv: "ANTHROPIC_API_KEY",
    keyRequired: true,
    local: false,
    defaultModel: "claude-sonnet-4-5",
    description: "Anthropic Messages API",
  },
  "openrouter": {
    name: "openrouter",
    api: "openai",
    baseUrl: "https://openrouter.ai/api/v1",
    keyEnv: "OPENROUTER_API_KEY",
    keyRequired: true,
    local: false,
    chat: { maxTokensField: "max_tokens", reasoningField: "reasoning" },
    // Optional attribution header OpenRouter documents for apps.
    headers: { "X-Title": "tern" },
    defaultModel: "anthropic/claude-sonnet-4.5",
    description: "OpenRouter: many vendors' models behind one OpenAI-compatible API",
  },
  "ollama": {
    name: "ollama",
    api: "openai",
    baseUrl: "http://127.0.0.1:11434/v1",
    keyRequired: false,
    local: true,
    chat: { ...LOCAL_CHAT },
    defaultModel: "qwen3-coder",
    description: "Ollama on this machine (OpenAI-compatible endpoint)",
  },
  "lmstudio": {
    name: "lmstudio",
    api: "openai",
    baseUrl: "http://127.0.0.1:1234/v1",
    keyRequired: false,
    local: true,
    chat: { ...LOCAL_CHAT },
    defaultModel: "qwen/qwen3-coder-30b",
    description: "LM Studio's local server",
  },
  "vllm": {
    name: "vllm",
    api: "openai",
    baseUrl: "http://127.0.0.1:8000/v1",
    // Only needed when the server was started with `--api-key`.
    keyEnv: "VLLM_API_KEY",
    keyRequired: false,
    local: true,
    chat: { ...LOCAL_CHAT },
    defaultModel: "Qwen/Qwen3-Coder-30B-A3B-Instruct",
    description: "vLLM's OpenAI-compatible server",
  },
  "llamacpp": {
    name: "llamacpp",
    api: "openai",
    baseUrl: "http://127.0.0.1:8080/v1",
    keyRequired: false,
    local: true,
    chat: { ...LOCAL_CHAT },
    // llama-server answers with the one model it loaded, whatever name is sent.
    defaultModel: "default",
    description: "llama.cpp's llama-server",
  },
});

const ALIASES: Readonly<Record<string, string>> = {
  "lm-studio": "lmstudio",
  "llama.cpp": "llamacpp",
  "llama-cpp": "llamacpp",
};

/** The preset named `name` (case-insensitive; `lm-studio`, `llama.cpp`, `llama-cpp` accepted). */
export function findPreset(name: string): ProviderPreset | undefined {
  const key = name.trim().toLowerCase();
  const canonical = Object.hasOwn(ALIASES, key) ? ALIASES[key] : key;
  return Object.hasOwn(PROVIDER_PRESETS, canonical) ? PROVIDER_PRESETS[canonical] : undefined;
}
