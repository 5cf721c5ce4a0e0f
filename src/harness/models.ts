/** The models a session talks to, and the settings a turn runs with. */
import {
  type ConfigSource,
  describeSource,
  isExplicitSource,
  isFlagSource,
  isProjectSource,
  type TernConfig,
} from "../config/mod.ts";
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

/**
 * The context window a turn budgets for: the configured one, else the catalog's for the model.
 * A project's files may only narrow it below what tern would use without them: a window wider
 * than the model's lets every request grow past what the server takes (or bills), so a
 * project's `contextWindow`, a `models` row only a project's files wrote, and a window a
 * project's file wrote into a row of the person's, is bounded by the window of the person's
 * own catalog. The person's own `contextWindow` is used as given,
 * over the catalog's too: they may run the model with a longer context than its published
 * one (a local server's setting), and a model the catalog does not know gets a guess.
 */
function windowOf(
  config: TernConfig,
  sources: Readonly<Record<string, ConfigSource>>,
  primary: Pick<ModelSetup["primary"], "model" | "info" | "providerName">,
): number {
  const { model, info, providerName } = primary;
  if (isExplicitSource(sources.contextWindow) && !isProjectSource(sources.contextWindow)) {
    return config.contextWindow;
  }
  const projectRows = config.projectModels ?? [];
  // A window a project wrote into a row of the person's that had none (loadConfig's sources).
  const claimed = (key: string) => isProjectSource(sources[`models.${key}.contextWindow`]);
  const personRows = Object.entries(config.models)
    .filter(([key]) => !projectRows.includes(key))
    .map(([key, row]) => [key, claimed(key) ? { ...row, contextWindow: undefined } : row]);
  const own = projectRows.length === 0 && !Object.keys(config.models).some(claimed)
    ? info.contextWindow
    : configuredCatalog({ ...config, models: Object.fromEntries(personRows), projectModels: [] })
      .lookup(providerName, model).contextWindow;
  const catalog = Math.min(info.contextWindow, own);
  return isExplicitSource(sources.contextWindow)
    ? Math.min(config.contextWindow, catalog)
    : catalog;
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
  const { model, info, providerName } = setup.primary;
  const contextWindow = windowOf(config, sources, { model, info, providerName });
  // A project's model is not the reviewer of its own calls (TernConfig.ownModel).
  const reviewer = config.reviewModel === undefined && setup.ownModel !== undefined
    ? { reviewModel: setup.ownModel }
    : {};
  return {
    setup,
    config: { ...config, model, provider: providerName, contextWindow, ...reviewer },
  };
}
