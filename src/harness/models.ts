/** The models a session talks to, and the settings a turn runs with. */
import {
  type ConfigSource,
  describeSource,
  isExplicitSource,
  isFlagSource,
  isProjectSource,
  type TernConfig,
} from "../config/mod.ts";
import type { ModelInfo } from "../llm/model_info.ts";
import type { RouteTarget } from "../llm/router.ts";
import { configuredCatalog, type ModelSetup, setupModels } from "../llm/setup.ts";
import type { ReplayState } from "../session/replay.ts";
import type { SandboxConfig } from "./agent_sandbox.ts";

/** The settings a turn needs; the rest of the config is the provider's business. */
export type TurnConfig =
  & Pick<
    TernConfig,
    | "model"
    | "maxRounds"
    | "maxTokens"
    | "temperature"
    | "bashTimeoutMs"
    | "contextWindow"
    | "compactAt"
    | "toolResultChars"
    | "thinking"
  >
  & Partial<
    Pick<
      TernConfig,
      | "provider"
      | "searchWeights"
      | "webSearch"
      | "webFetch"
      | "mcpToolSearch"
      | "diagnostics"
      | "rewindMaxFileBytes"
      | "rewindMaxFiles"
      | "memoryFacts"
      | "serverChosenBy"
    >
  >
  & SandboxConfig;

/** Where a target's limits come from: its catalog row, and the person's own catalog's. */
type Target = Pick<RouteTarget, "model" | "info" | "providerName">;

/**
 * The context window a turn budgets for: the configured one, else the catalog's for the model.
 * A project's files may only narrow it below what tern would use without them: a window wider
 * than the model's lets every request grow past what the server takes (or bills), so a
 * project's `contextWindow`, a `models` row only a project's files wrote, and a window a
 * project's file wrote into a row of the person's, is bounded by the window of the person's
 * own catalog. The person's own `contextWindow` is used as given,
 * over the catalog's too: they may run the model with a longer context than its published
 * one (a local server's setting), and a model the catalog does not know gets a guess.
 *
 * A request may end at any fallback (the main model failing is not known ahead), so the window
 * is also no wider than each fallback's catalog window: a request sized for the main model
 * would be refused by a fallback with a smaller one. A fallback the catalog does not know
 * leaves the person's own `contextWindow` as it is (its window is a guess).
 */
function windowOf(
  config: TernConfig,
  sources: Readonly<Record<string, ConfigSource>>,
  targets: {
    primary: Target;
    fallbacks: readonly Target[];
    own: (target: Target) => Pick<ModelInfo, "contextWindow">;
  },
): number {
  const { own } = targets;
  const person = isExplicitSource(sources.contextWindow) &&
    !isProjectSource(sources.contextWindow);
  let window = person ? config.contextWindow : own(targets.primary).contextWindow;
  if (isExplicitSource(sources.contextWindow)) window = Math.min(config.contextWindow, window);
  for (const fallback of targets.fallbacks) {
    if (person && (fallback.info.source === "default" || fallback.info.guessed)) continue;
    window = Math.min(window, own(fallback).contextWindow);
  }
  return window;
}

/**
 * A target's window and output limit, each no more than the person's own catalog gives: a
 * `models` row only a project's files wrote, or a limit a project's file wrote into a row of
 * the person's that had none (loadConfig's sources), may narrow them, never widen them.
 */
function ownLimits(
  config: TernConfig,
  sources: Readonly<Record<string, ConfigSource>>,
): (target: Target) => Pick<ModelInfo, "contextWindow" | "maxOutputTokens"> {
  const projectRows = config.projectModels ?? [];
  const claimed = (key: string, field: string) =>
    isProjectSource(sources[`models.${key}.${field}`]);
  const claims = (key: string) => claimed(key, "contextWindow") || claimed(key, "maxOutputTokens");
  if (projectRows.length === 0 && !Object.keys(config.models).some(claims)) {
    return ({ info }) => info;
  }
  const personRows = Object.entries(config.models)
    .filter(([key]) => !projectRows.includes(key))
    .map(([key, row]) => [key, {
      ...row,
      ...(claimed(key, "contextWindow") ? { contextWindow: undefined } : {}),
      ...(claimed(key, "maxOutputTokens") ? { maxOutputTokens: undefined } : {}),
    }]);
  const catalog = configuredCatalog({
    ...config,
    models: Object.fromEntries(personRows),
    projectModels: [],
  });
  return ({ info, providerName, model }) => {
    const theirs = catalog.lookup(providerName, model);
    return {
      contextWindow: Math.min(info.contextWindow, theirs.contextWindow),
      maxOutputTokens: Math.min(info.maxOutputTokens, theirs.maxOutputTokens),
    };
  };
}

/**
 * Bounds each target's output limit by the person's own catalog (`ownLimits()`): a project's
 * `models` row asking for more output than the model's row allows would raise the thinking
 * budget, and so what each call may cost.
 */
function boundOutput(
  targets: readonly RouteTarget[],
  own: (target: Target) => Pick<ModelInfo, "maxOutputTokens">,
): void {
  for (const target of targets) {
    const { maxOutputTokens } = own(target);
    // The router holds these targets: the bounded row is the one its requests use.
    if (maxOutputTokens < target.info.maxOutputTokens) {
      target.info = { ...target.info, maxOutputTokens };
    }
  }
}

/**
 * Connects to the models `config` names: the router (main provider and fallbacks) and the
 * config the turn runs with, its model the one actually used and its context window from the
 * catalog unless configured. The provider modules load here (`setupModels`), off the
 * `--version` path.
 * @throws {ProviderSetupError} for an unknown provider or a missing key.
 */
// deno-lint-ignore require-await -- async, so that a setup error is a rejection, as callers take it
export async function connectModels(
  config: TernConfig,
  sources: Readonly<Record<string, ConfigSource>>,
  restored?: Pick<ReplayState, "model">,
): Promise<{ setup: ModelSetup; config: TernConfig }> {
  // applySessionSettings() drops the session's model when --provider or --model was given.
  const fromFlag = isFlagSource(sources.provider) || isFlagSource(sources.model);
  const fromSession = restored?.model !== undefined && !fromFlag;
  const setup = setupModels(config, {
    model: isExplicitSource(sources.model) || fromSession,
    baseUrl: isExplicitSource(sources.baseUrl),
    ...(sources.model && isProjectSource(sources.model) && !fromSession
      ? { projectModel: describeSource(sources.model) }
      : {}),
  });
  const own = ownLimits(config, sources);
  boundOutput([setup.primary, ...setup.fallbacks], own);
  const contextWindow = windowOf(config, sources, { ...setup, own });
  const { model, providerName } = setup.primary;
  // A project's model is not the reviewer of its own calls (TernConfig.ownModel).
  const reviewer = config.reviewModel === undefined && setup.ownModel !== undefined
    ? { reviewModel: setup.ownModel }
    : {};
  return {
    setup,
    config: { ...config, model, provider: providerName, contextWindow, ...reviewer },
  };
}
