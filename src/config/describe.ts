/** Human-readable configuration for `tern config`, with the API key never shown. */
import type { TernConfig } from "./schema.ts";

const ORDER: ReadonlyArray<keyof TernConfig> = [
  "provider",
  "model",
  "baseUrl",
  "apiKey",
  "maxRounds",
  "maxTokens",
  "temperature",
  "thinking",
  "fallback",
  "maxRetries",
  "retryBaseMs",
  "requestTimeoutMs",
  "idleTimeoutMs",
  "bashTimeoutMs",
  "contextWindow",
  "compactAt",
  "toolResultChars",
  "planConcurrency",
  "ternHome",
];

const WIDTH = Math.max(...ORDER.map((key) => key.length)) + 2;

/**
 * One line per field, `key  value  (source)`, with `sources` from `loadConfig()`. The API key
 * appears only as `set (from TERN_API_KEY in the environment)` or `not set`. Never throws.
 */
export function describeConfig(config: TernConfig, sources: Record<string, string> = {}): string {
  return ORDER.map((key) => {
    const label = key.padEnd(WIDTH);
    const source = sources[key];
    if (key === "apiKey") {
      if (!config.apiKey) return `${label}not set${source ? ` (${source})` : ""}`;
      return `${label}set${source ? ` (from ${source})` : ""}`;
    }
    const value = config[key];
    if (value === undefined || (Array.isArray(value) && value.length === 0)) {
      return `${label}not set`;
    }
    return `${label}${value}${source ? `  (${source})` : ""}`;
  }).join("\n");
}
