/**
 * A Provider for the Anthropic Messages API (and servers that speak it), streaming over SSE
 * with plain `fetch`. Makes one attempt per `stream()`; retries and fallback wrap this provider
 * from outside (router.ts).
 */
import { API_PATHS } from "./api_paths.ts";
import { type HttpProviderOptions, httpStreamConfig, postForStream } from "./http_stream.ts";
import { AnthropicStreamState, toAnthropicRequestBody } from "./anthropic_wire.ts";
import type { Provider } from "./types.ts";

/** The `anthropic-version` header sent unless `version` says otherwise. */
export const ANTHROPIC_VERSION = "2023-06-01";

/**
 * Options of the Anthropic provider. `baseUrl` includes the version, as for the other
 * providers: `https://api.anthropic.com/v1`. The key goes in `x-api-key`.
 */
export type AnthropicOptions = HttpProviderOptions & {
  /** The `anthropic-version` header. Default `2023-06-01`. */
  version?: string;
};

/**
 * Creates the provider (name default `anthropic`). `stream()` POSTs `<baseUrl>/messages` with
 * `stream: true` and never throws: every failure is a final `error` event (kind `aborted` when
 * `signal` fired).
 * @throws {TypeError} for an invalid base URL.
 */
export function createAnthropicProvider(options: AnthropicOptions): Provider {
  const headers: Record<string, string> = {
    "anthropic-version": options.version ?? ANTHROPIC_VERSION,
  };
  if (options.apiKey) headers["x-api-key"] = options.apiKey;
  const config = httpStreamConfig(options, API_PATHS.anthropic, headers);
  return {
    name: options.name ?? "anthropic",
    stream: (request, signal) =>
      postForStream(
        config,
        () => toAnthropicRequestBody(request),
        () => new AnthropicStreamState(config.secrets),
        signal,
      ),
  };
}
