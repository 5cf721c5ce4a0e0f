/**
 * What the interactive session loads behind the first prompt: remembered facts (for the system
 * prompt, /save and /memory), the workspace baseline /diff compares with, and the syntax
 * highlighter. Each starts after the first frame and is awaited only by what needs it.
 */
import type { TernConfig } from "../../config/mod.ts";
import { type Fact, MemoryStore } from "../../memory/facts.ts";
import { loadHighlighter } from "../../tui/highlight.ts";
import { type Baseline, captureBaseline, workspaceDiff } from "../workspace_diff.ts";
import { readEnv } from "../process_env.ts";
import { join } from "../../core/path.ts";
import { makePrivateTmp, removeStaleTmp } from "../../sandbox/private_tmp.ts";
import { keyMasker } from "../../sandbox/secrets.ts";
import { UNNAMED_PROVIDER } from "../../harness/run_session.ts";

export interface BackgroundServices {
  /** Starts the loads; called once the prompt is on screen. */
  start(): void;
  /** The remembered facts as last read (none until loaded); the turns choose among them. */
  facts(): readonly Fact[];
  memory(): Promise<MemoryStore>;
  /** Workspace changes since the session began; undefined outside a git repository. */
  diff(): Promise<{ patch: string; files: string[]; notes: string[] } | undefined>;
  /** A new session began: take a new baseline. */
  resetBaseline(): void;
  /** Models the /model picker offers: the current provider's first, then usable others. */
  models(config: TernConfig): Promise<Array<{ provider: string; model: string; detail: string }>>;
}

/**
 * `config`: where tern's home is, and the keys it holds, which no remembered fact keeps (`/save`
 * refuses one, a fact saved with one is read masked).
 */
export function backgroundServices(
  options: {
    workspace: string;
    config: { ternHome: string; apiKey?: string; apiKeys?: Record<string, string> };
  },
): BackgroundServices {
  const { workspace, config } = options;
  const ternHome = config.ternHome;
  let memory: Promise<MemoryStore> | undefined;
  let facts: readonly Fact[] = [];
  let baseline: Promise<Baseline | undefined> | undefined;
  // The snapshots' objects go to a folder of tern's home, never the repository's `.git`, which
  // commands can read (a snapshot holds `.env` and untracked secrets). One per process, locked;
  // those of dead processes are removed at the next start.
  let objects: Promise<string> | undefined;
  const objectStore = () =>
    objects ??= makePrivateTmp(join(ternHome, "diff")).then(async (folder) => {
      await removeStaleTmp(folder.path);
      return folder.path;
    });
  const gitAccess = async () => ({
    path: readEnv("PATH"),
    home: readEnv("HOME"),
    objects: await objectStore(),
  });
  const openMemory = () =>
    memory ??= MemoryStore.open(ternHome, workspace, { masker: keyMasker(config) }).then(
      (store) => {
        facts = store.list();
        return store;
      },
    );
  const takeBaseline = () =>
    baseline = gitAccess().then((git) => captureBaseline(workspace, git)).catch(() => undefined);
  return {
    start() {
      openMemory().catch(() => {});
      takeBaseline();
      loadHighlighter().catch(() => {});
    },
    facts() {
      return facts;
    },
    async memory() {
      const store = await openMemory();
      // /save and /memory rm change the list: the next turn's prompt reads it again.
      return new Proxy(store, {
        get(target, key, receiver) {
          const value = Reflect.get(target, key, receiver);
          if (typeof value !== "function") return value;
          // The store's methods use private fields: they must run on the store itself.
          if (key !== "add" && key !== "forget") return value.bind(target);
          return async (...args: unknown[]) => {
            const result = await value.apply(target, args);
            facts = target.list();
            return result;
          };
        },
      });
    },
    async diff() {
      const base = await (baseline ?? takeBaseline());
      if (base === undefined) return undefined;
      return await workspaceDiff(workspace, base, await gitAccess());
    },
    resetBaseline() {
      takeBaseline();
    },
    async models(config) {
      const { configuredCatalog, resolveNamedProvider } = await import("../../llm/setup.ts");
      const { readAllCachedModels } = await import("../../llm/models_cache.ts");
      const catalog = configuredCatalog(config);
      // What the servers listed last (`tern models`), without asking them now.
      for (const listing of (await readAllCachedModels(ternHome)).values()) {
        catalog.add(listing.models);
      }
      const current = config.provider ?? catalog.providerOf(config.model) ?? "";
      const usable = (name: string) => {
        if (name === current) return true;
        try {
          const provider = resolveNamedProvider(name, config, {
            primary: false,
            baseUrl: undefined,
          });
          return provider !== undefined && (provider.apiKey !== undefined || !provider.keyRequired);
        } catch {
          return false;
        }
      };
      const entries = catalog.entries().filter((entry) =>
        entry.provider !== "" && usable(entry.provider)
      );
      entries.sort((a, b) => Number(b.provider === current) - Number(a.provider === current));
      const list = entries.map((entry) => ({
        provider: entry.provider,
        model: entry.id,
        detail: `${Math.round(entry.contextWindow / 1000)}k${entry.reasoning ? " · thinking" : ""}${
          entry.guessed ? " · guessed" : ""
        }`,
      }));
      if (!list.some((m) => m.model === config.model)) {
        // A provider given only by its base URL has no name to switch back to: "" keeps it.
        const named = config.provider !== undefined && config.provider !== UNNAMED_PROVIDER;
        list.unshift({ provider: named ? current : "", model: config.model, detail: "current" });
      }
      return list;
    },
  };
}
