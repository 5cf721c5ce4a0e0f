/**
 * A Provider for OpenAI-compatible Chat Completions APIs (OpenAI, vLLM, Ollama, llama.cpp,
 * OpenRouter, ...), streaming over SSE with plain `fetch`. Makes one attempt per `stream()`;
 * retries and fallback wrap this provider from outside (router.ts).
 */
import { API_PATHS } from "./api_paths.ts";
import { type HttpProviderOptions, httpStreamConfig, postForStream } from "./http_stream.ts";
import { type ChatDialect, ChatStreamState, toChatRequestBody } from "./openai_chat_wire.ts";
import type { Provider } from "./types.ts";

/** Options of the Chat Completions provider; the key goes in `Authorization: Bearer`. */
export interface OpenAiChatOptions extends HttpProviderOptions {
  /** How this server takes output limits and reasoning. Default: `max_tokens`, `reasoning_effort`. */
  dialect?: ChatDialect;
}

/**
 * Creates the provider. `stream()` POSTs `<baseUrl>/chat/completions` with `stream: true` and
 * never throws: every failure is a final `error` event (kind `aborted` when `signal` fired).
 * @throws {TypeError} for an invalid base URL.
 */
export function createOpenAiChatProvider(options: OpenAiChatOptions): Provider {
  const auth: Record<string, string> = options.apiKey
    ? { authorization: `Bearer ${options.apiKey}` }
    : {};
  const config = httpStreamConfig(options, API_PATHS.openai, auth);
  return {
    name: options.name ?? "openai-chat",
    stream: (request, signal) =>
      postForStream(
        config,
        () => toChatRequestBody(request, options.dialect),
        () => new ChatStreamState(config.secrets),
        signal,
      ),
  };
}
