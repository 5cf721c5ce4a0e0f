/** Shared pieces of the router tests: targets, model facts, scripted servers, event helpers. */
import assert from "node:assert/strict";
import { createAnthropicProvider } from "../../src/llm/anthropic.ts";
import type { ApiStyle, ModelInfo } from "../../src/llm/model_info.ts";
import { createOpenAiChatProvider } from "../../src/llm/openai_chat.ts";
import { createOpenAiResponsesProvider } from "../../src/llm/openai_responses.ts";
import type { RouteTarget } from "../../src/llm/router.ts";
import type { Script } from "../../src/llm/scripted.ts";
import type { ModelRequest, Provider, StreamEvent } from "../../src/llm/types.ts";
import { type ScriptedServer, startScriptedServer } from "../support/scripted_server.ts";

/** A plain one-message request for `model`. */
export function request(model: string, extra: Partial<ModelRequest> = {}): ModelRequest {
  return { model, messages: [{ role: "user", content: "hello" }], tools: [], ...extra };
}

/** Model facts with no thinking and no price unless `extra` says so. */
export function info(id: string, extra: Partial<ModelInfo> = {}): ModelInfo {
  return {
    id,
    contextWindow: 128_000,
    maxOutputTokens: 64_000,
    images: false,
    tools: true,
    source: "config",
    ...extra,
  };
}

/** A target around any provider. */
export function target(
  provider: Provider,
  providerName: string,
  model: string,
  extra: { api?: ApiStyle; info?: ModelInfo } = {},
): RouteTarget {
  return {
    provider,
    providerName,
    api: extra.api ?? "openai",
    model,
    info: extra.info ?? info(model),
  };
}

/** A real wire provider of `api` style pointed at `server`. */
export function wireProvider(api: ApiStyle, server: ScriptedServer, apiKey?: string): Provider {
  const options = { baseUrl: server.baseUrl, apiKey };
  switch (api) {
    case "openai":
      return createOpenAiChatProvider(options);
    case "anthropic":
      return createAnthropicProvider(options);
    case "openai-responses":
      return createOpenAiResponsesProvider(options);
  }
}

/** A target on a real wire provider of `api` style talking to `server`. */
export function wireTarget(
  server: ScriptedServer,
  providerName: string,
  model: string,
  extra: { api?: ApiStyle; info?: ModelInfo; apiKey?: string } = {},
): RouteTarget {
  const api = extra.api ?? "openai";
  return target(wireProvider(api, server, extra.apiKey), providerName, model, { api, ...extra });
}

/** Runs `body` with one scripted server per script; all are closed afterwards. */
export async function withServers(
  scripts: Script[],
  body: (servers: ScriptedServer[]) => Promise<void>,
): Promise<void> {
  const servers: ScriptedServer[] = [];
  try {
    for (const script of scripts) servers.push(await startScriptedServer(script));
    await body(servers);
  } finally {
    await Promise.all(servers.map((server) => server.close()));
  }
}

/** Every event of a stream. */
export async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The events of one type. */
export function ofType<T extends StreamEvent["type"]>(
  events: StreamEvent[],
  type: T,
): Extract<StreamEvent, { type: T }>[] {
  return events.filter((event): event is Extract<StreamEvent, { type: T }> => event.type === type);
}

/** The last event, which must be of `type`. */
export function last<T extends StreamEvent["type"]>(
  events: StreamEvent[],
  type: T,
): Extract<StreamEvent, { type: T }> {
  const end = events.at(-1);
  assert.equal(end?.type, type, `expected a final ${type}, got ${JSON.stringify(end)}`);
  return end as Extract<StreamEvent, { type: T }>;
}

/** The text the stream delivered. */
export function textOf(events: StreamEvent[]): string {
  return ofType(events, "text_delta").map((event) => event.text).join("");
}
