/**
 * A Provider for the OpenAI Responses API (`POST /responses`), streaming over SSE with plain
 * `fetch`. Nothing is stored server-side (`store: false`): reasoning travels back to the API as
 * encrypted content on the assistant messages. Makes one attempt per `stream()`; retries and
 * fallback wrap this provider from outside (router.ts).
 */
import { type HttpProviderOptions, httpStreamConfig, postForStream } from "./http_stream.ts";
import { ResponsesStreamState, toResponsesRequestBody } from "./openai_responses_wire.ts";
import type { Provider } from "./types.ts";

/**
 * Creates the provider, named `openai-responses` unless `options.name` says otherwise. The key
 * goes in `Authorization: Bearer`. `stream()` POSTs `<baseUrl>/responses` and never throws:
 * every failure is a final `error` event (kind `aborted` when `signal` fired).
 * @throws {TypeError} for an invalid base URL.
 */
export function createOpenAiResponsesProvider(options: HttpProviderOptions): Provider {
  const auth: Record<string, string> = options.apiKey
    ? { authorization: `Bearer ${options.apiKey}` }
    : {};
  const config = httpStreamConfig(options, "/responses", auth);
  return {
    name: options.name ?? "openai-responses",
    stream: (request, signal) =>
      postForStream(
        config,
        () => toResponsesRequestBody(request),
        () => new ResponsesStreamState(config.secrets),
        signal,
      ),
  };
}
