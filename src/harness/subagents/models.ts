/** The check of a subagent's explicit provider and model against the catalog and the config. */
import type { ConfigSource, TernConfig } from "../../config/mod.ts";
import { ModelCatalog } from "../../llm/catalog.ts";
import { connectModels } from "../models.ts";

/**
 * Refuses a model the catalog, the config's `models` and the parent's own model do not know,
 * a provider that cannot be connected (unknown, or its key missing), and another provider
 * than the parent's while TERN_API_KEY is set (the child's would take that key).
 * @throws {Error} saying which and why.
 */
export async function checkChildModel(
  config: TernConfig,
  sources: Readonly<Record<string, ConfigSource>>,
  provider: string | undefined,
  model: string,
): Promise<void> {
  const known = model === config.model || Object.hasOwn(config.models, model) ||
    new ModelCatalog().entries(provider).some((entry) => entry.id === model);
  if (!known) {
    throw new Error(
      `Cannot use model "${model}"${provider ? ` at "${provider}"` : ""} for a subagent: ` +
        "not in the model catalog or the config's models (tern models lists them)",
    );
  }
  let chosen: string | undefined;
  try {
    const connected = await connectModels({ ...config, model, provider }, {
      ...sources,
      model: { layer: "flag", flag: "spawn_agent" },
      ...(provider === undefined ? {} : { provider: { layer: "flag", flag: "spawn_agent" } }),
    });
    chosen = connected.config.provider;
  } catch (error) {
    throw new Error(
      `Cannot use model "${model}" for a subagent: ${
        error instanceof Error ? error.message : error
      }`,
    );
  }
  // TERN_API_KEY is the main provider's key, and a child's main provider takes it first.
  if (config.apiKeys.TERN_API_KEY !== undefined && chosen !== config.provider) {
    throw new Error(
      `Cannot use provider "${chosen}" for a subagent: TERN_API_KEY holds the key of this ` +
        `session's provider "${config.provider}", which may not go to another provider; ` +
        "leave out provider, or use that provider's own key variable instead of TERN_API_KEY",
    );
  }
}
