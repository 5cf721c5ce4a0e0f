/**
 * Slash commands about settings and the workspace: /help, /model, /thinking, /mode, /profile,
 * /save, /memory, /cost, /diff, /quit.
 */
import { selectDialog } from "../../tui/select_dialog.ts";
import { renderDiff } from "../../tui/diff_view.ts";
import { oneLine } from "../../tui/format.ts";
import type { TernConfig } from "../../config/mod.ts";
import { formatValue } from "../../config/errors.ts";
import type { CommandContext, SlashCommand } from "./commands.ts";

const THINKING_LEVELS = ["off", "low", "medium", "high"] as const;
const MODES = ["ask", "auto", "bypass"] as const;
const BUILTIN_PROFILES = [":read-only", ":workspace", ":external", ":danger-full-access"];

/** The commands of this file, given what they need beyond the context. */
export function settingsCommands(deps: {
  /** Models one can switch to: `provider/model` with a short description. */
  models: () => Promise<Array<{ provider: string; model: string; detail: string }>>;
  /** Remembered facts. */
  memory: () => Promise<MemoryLike>;
  /** The workspace's changes since the session began; undefined outside a git repository. */
  diff: () => Promise<{ patch: string; files: string[]; notes: string[] } | undefined>;
}): SlashCommand[] {
  return [
    {
      name: "help",
      description: "list the commands and keys",
      whileRunning: true,
      run: (context) => context.print(helpLines(context)),
    },
    {
      name: "model",
      description: "switch the model (a picker without a name)",
      usage: "[provider/model | model]",
      run: async (context, args) => {
        let change: Partial<TernConfig>;
        if (args === "") {
          if (!context.canAsk) {
            throw new Error(
              "/model needs a model name in line mode: /model <provider/model | model> " +
                "(`tern models` lists them)",
            );
          }
          const models = await deps.models();
          const current = models.findIndex((m) => m.model === context.config.model);
          const picked = await context.pick(selectDialog({
            theme: context.theme,
            title: "Model",
            items: models.map((m) => ({
              label: m.provider === "" ? m.model : `${m.provider}/${m.model}`,
              detail: m.detail,
              value: m,
            })),
            filterable: true,
            initial: Math.max(0, current),
          }));
          if (picked === undefined) return;
          change = picked.provider === "" ? { model: picked.model } : {
            provider: picked.provider,
            model: picked.model,
          };
        } else {
          // `provider/model`; a model id may hold slashes itself (openrouter/anthropic/…).
          const slash = args.indexOf("/");
          change = slash > 0
            ? { provider: args.slice(0, slash), model: args.slice(slash + 1) }
            : { model: args };
        }
        await context.configure(change);
        const { provider, model } = context.config;
        context.notice(`model: ${provider ? `${provider}/` : ""}${model}`);
      },
    },
    choiceCommand("thinking", "how hard the model thinks", THINKING_LEVELS, "thinking", "a level"),
    choiceCommand("mode", "who approves calls the sandbox leaves open", MODES, "mode", "a mode"),
    {
      name: "profile",
      description: "the sandbox profile for tool calls",
      usage: "[name]",
      run: async (context, args) => {
        const custom = Object.keys(context.config.profiles ?? {});
        const names = [...BUILTIN_PROFILES, ...custom.filter((n) => !BUILTIN_PROFILES.includes(n))];
        if (args === "" && !context.canAsk) {
          throw new Error(
            `/profile needs a profile name in line mode: /profile <name>, one of ${
              names.join(", ")
            }`,
          );
        }
        const value = args || await context.pick(selectDialog({
          theme: context.theme,
          title: "Sandbox profile",
          items: names.map((name) => ({ label: name, value: name })),
          initial: Math.max(0, names.indexOf(context.config.profile)),
        }));
        if (!value) return;
        if (!names.includes(value)) {
          // Taken as given, every tool call would fail to open the sandbox, and the session would
          // keep the name for `tern run -c`.
          throw new Error(
            `Unknown sandbox profile ${formatValue(value)}: choose one of ${names.join(", ")}`,
          );
        }
        await context.configure({ profile: value });
        context.notice(`profile: ${value} (the tool sandbox restarts for the next call)`);
      },
    },
    {
      name: "save",
      description: "remember a fact for later sessions (-g: for every project)",
      usage: "[-g] <fact>",
      whileRunning: true,
      run: async (context, args) => {
        const global = /^-g\s+/.test(args);
        const text = global ? args.replace(/^-g\s+/, "") : args;
        if (text.trim() === "") throw new Error("Nothing to save: write the fact after /save");
        const fact = await (await deps.memory()).add(text, global ? "user" : "project");
        context.notice(`remembered ${fact.id} (${fact.scope}): ${fact.text}`);
      },
    },
    {
      name: "memory",
      description: "list remembered facts; /memory rm <id> forgets one",
      usage: "[rm <id>]",
      whileRunning: true,
      run: async (context, args) => {
        const memory = await deps.memory();
        const forget = /^(?:rm|forget)\s+(\S+)$/.exec(args);
        if (forget) {
          const fact = await memory.forget(forget[1]);
          context.notice(`forgot ${fact.id}: ${fact.text}`);
          return;
        }
        if (args !== "") {
          throw new Error(`Unknown /memory arguments "${args}": use /memory rm <id>`);
        }
        const facts = memory.list();
        if (facts.length === 0) {
          context.notice("no remembered facts: add one with /save <fact>");
          return;
        }
        context.print(
          facts.map((f) =>
            `  ${context.theme.dim(f.id)} ${f.scope === "user" ? "[user] " : ""}${oneLine(f.text)}`
          ),
        );
      },
    },
    {
      name: "cost",
      description: "tokens and cost of this session",
      whileRunning: true,
      run: (context) => {
        const { usage, cost, saved } = context.session.state();
        const dollars = cost === undefined
          ? "unknown (no prices for this model)"
          : `$${cost.toFixed(4)}`;
        const written = usage.cacheWriteTokens ? `, cache writes ${usage.cacheWriteTokens}` : "";
        context.print([
          `  input ${usage.inputTokens} tokens (cached ${usage.cachedTokens}${written}), ` +
          `output ${usage.outputTokens} (reasoning ${usage.reasoningTokens})`,
          `  cost ${dollars}` +
          (saved === undefined ? "" : `, prompt cache saved $${saved.toFixed(4)}`),
        ]);
      },
    },
    {
      name: "diff",
      description: "workspace changes since the session began",
      whileRunning: true,
      run: async (context) => {
        const diff = await deps.diff();
        if (diff === undefined) {
          context.notice("/diff needs a git repository: the workspace is not in one", "warning");
        } else if (diff.files.length === 0) {
          context.notice("no changes since the session began");
        } else {
          context.print([
            context.theme.bold(`${diff.files.length} file(s) changed since the session began`),
            ...renderDiff(diff.patch, context.width(), context.theme, 400),
            ...diff.notes.map((note) => context.theme.dim(`  ${note}`)),
          ]);
        }
      },
    },
    {
      name: "quit",
      description: "leave tern (also Ctrl-D)",
      whileRunning: true,
      run: (context) => context.exit(),
    },
    {
      name: "exit",
      description: "leave tern",
      whileRunning: true,
      run: (context) => context.exit(),
    },
  ];
}

/** What /save and /memory use of the memory store. */
export interface MemoryLike {
  add(
    text: string,
    scope: "project" | "user",
  ): Promise<{ id: string; text: string; scope: string }>;
  forget(idPrefix: string): Promise<{ id: string; text: string }>;
  list(): Array<{ id: string; text: string; scope: string }>;
}

function choiceCommand(
  name: string,
  description: string,
  values: readonly string[],
  key: "thinking" | "mode",
  /** What the argument is, for line mode's refusal ("a level"). */
  noun: string,
): SlashCommand {
  const usage = values.join("|");
  return {
    name,
    description,
    usage: `[${usage}]`,
    run: async (context, args) => {
      if (args === "" && !context.canAsk) {
        throw new Error(`/${name} needs ${noun} in line mode: /${name} ${usage}`);
      }
      const value = args || await context.pick(selectDialog({
        theme: context.theme,
        title: name,
        items: values.map((v) => ({ label: v, value: v })),
        initial: Math.max(0, values.indexOf(context.config[key])),
      }));
      if (!value) return;
      if (!values.includes(value)) {
        throw new Error(`Unknown ${name} "${value}": use one of ${values.join(", ")}`);
      }
      await context.configure({ [key]: value } as Partial<TernConfig>);
      context.notice(`${name}: ${value}`);
    },
  };
}

function helpLines(context: CommandContext): string[] {
  const { theme } = context;
  const commands = context.commands().map((c) =>
    `  ${theme.cyan(`/${c.name}`)}${c.usage ? ` ${c.usage}` : ""}  ${theme.dim(c.description)}`
  );
  return [
    theme.bold("Commands"),
    ...commands,
    theme.bold("Keys"),
    `  Enter send · Shift+Enter, Alt+Enter or a trailing \\ new line · Tab complete / and @path`,
    `  Up/Down history · Esc or Ctrl-C stop the turn · Ctrl-C twice or Ctrl-D leave`,
    `  typing while tern works queues a message for its next step`,
  ];
}
