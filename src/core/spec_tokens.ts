/**
 * Token estimates of tool specs known before the estimator sees them: the built-in manifest's,
 * made when the manifest was generated (a test keeps each equal to the estimate of the spec as
 * a request sends it). The first request's size check would otherwise estimate about 17,000
 * characters of schemas, 2–4 ms of CPU before the request goes out.
 */
import type { ToolSpec } from "./tool_spec.ts";

interface KnownSpec {
  name: string;
  description: string;
  tokens: number;
}

/** By the spec's `parameters` object, which the manifest's tools hand on unchanged. */
const known = new WeakMap<object, KnownSpec>();

/** Records that `spec`, sent as its name, description and parameters, estimates to `tokens`. */
export function rememberSpecTokens(spec: ToolSpec, tokens: number): void {
  known.set(spec.parameters, { name: spec.name, description: spec.description, tokens });
}

/**
 * The recorded estimate of `spec`: only for the very `parameters` object recorded, with the
 * same name and description (a tool whose description was reworded is estimated anew).
 */
export function knownSpecTokens(spec: ToolSpec): number | undefined {
  const entry = known.get(spec.parameters);
  return entry !== undefined && entry.name === spec.name && entry.description === spec.description
    ? entry.tokens
    : undefined;
}
