/**
 * The slash commands that resources make: `/context` (what goes into the system prompt), one
 * `/name` per prompt template and one `/skill:name` per skill. A template's or a skill's
 * command is a message: what it renders is sent as the person's turn. Resources are read once,
 * when the commands load; a template added later counts at the next start.
 */
import type { PermissionRule } from "../../config/schema.ts";
import { loadResources } from "../../memory/resources.ts";
import { usage } from "../../memory/templates.ts";
import {
  describeContext,
  formatContextReport,
  type MemoryInputs,
} from "../../harness/resource_prompt.ts";
import { expandInput } from "../../harness/resource_input.ts";
import { terminalText, visibleText } from "../../core/terminal_text.ts";
import { estimateTokens } from "../../context/tokens.ts";
import type { SlashCommand } from "./commands.ts";

export interface ResourceCommandDeps {
  workspace: string;
  ternHome: string;
  /** The person's home folder and rules: what the model may not read is not read for it. */
  home: string | undefined;
  rules: readonly PermissionRule[];
  /** The remembered facts and how many a message gets. */
  memory: () => Omit<MemoryInputs, "task">;
  /** Names taken by built-in commands: a template of such a name is left out, with a note. */
  taken: ReadonlySet<string>;
  /** Told about a template left out. */
  warn: (text: string) => void;
  /**
   * Whether the person's own resources and facts for every workspace go to the model (not to
   * a server a project's files chose); default true.
   */
  personal?: () => boolean;
  /** What fills the model's window besides the system prompt, when a conversation is open. */
  window?: () => Promise<ContextWindowFacts | undefined>;
  /** Masks the keys tern holds in what the files bring (a template may be a link to `.env`). */
  mask?: (text: string) => string;
}

/** The rest of the window: the tools offered, the transcript sent, and the window's size. */
export interface ContextWindowFacts {
  tools: ReadonlyArray<{ name: string; description: string; parameters: unknown }>;
  messages: readonly unknown[];
  /** The model's context window, in tokens. */
  contextWindow: number;
  /** Input and output tokens of the last request, when there was one. */
  lastRequest?: number;
}

/**
 * The window beyond the system prompt, as `/context` lines: the tools' definitions and the
 * transcript, each with its estimated tokens, then the total against the window.
 */
export function windowLines(facts: ContextWindowFacts, systemTokens: number): string[] {
  const tools = facts.tools.reduce(
    (sum, tool) =>
      sum + estimateTokens(tool.name + tool.description + JSON.stringify(tool.parameters)),
    0,
  );
  const transcript = facts.messages.reduce<number>(
    (sum, message) => sum + estimateTokens(JSON.stringify(message)),
    0,
  );
  const total = systemTokens + tools + transcript;
  const share = (n: number) =>
    facts.contextWindow > 0 ? ` (${Math.round((n / facts.contextWindow) * 100)}%)` : "";
  const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;
  return [
    `The model's window: ~${total} of ${facts.contextWindow} tokens${share(total)} (estimated)`,
    `  ${String(systemTokens).padStart(7)}  system prompt (above)`,
    `  ${String(tools).padStart(7)}  tools (${count(facts.tools.length, "definition")})`,
    `  ${String(transcript).padStart(7)}  transcript (${count(facts.messages.length, "message")})`,
    ...(facts.lastRequest === undefined ? [] : [
      `Last request: ${facts.lastRequest} tokens${share(facts.lastRequest)} (as the model counted)`,
    ]),
  ];
}

/** `/context`, and the commands of the templates and skills found now. */
export async function resourceCommands(deps: ResourceCommandDeps): Promise<SlashCommand[]> {
  const { modelReadGuard } = await import("../../harness/read_guard.ts");
  // Without the person's own skills and templates when a project's files chose the model
  // server: a command would send theirs there.
  const resources = await loadResources(deps.workspace, deps.ternHome, await modelReadGuard(deps), {
    personal: deps.personal?.(),
    mask: deps.mask,
  });
  const commands: SlashCommand[] = [{
    name: "context",
    description: "what fills the model's window: each part of the system prompt, its file " +
      "and its tokens, the tools and the transcript; with a message, the facts it would get",
    usage: "[message]",
    whileRunning: true,
    async run(context, args) {
      const memory = { ...deps.memory(), task: args.trim() === "" ? undefined : args.trim() };
      const report = await describeContext(deps, memory, {
        personal: deps.personal?.(),
        mask: deps.mask,
      });
      const facts = await deps.window?.().catch(() => undefined);
      const window = facts ? windowLines(facts, report.totalTokens) : [];
      context.print([...formatContextReport(report), ...window].map(terminalText));
    },
  }];
  for (const template of resources.templates) {
    const lower = template.name.toLowerCase();
    if (deps.taken.has(lower) || lower === "context") {
      deps.warn(
        `Prompt template "${template.path}" is not offered as /${template.name}: a built-in ` +
          "command has that name",
      );
      continue;
    }
    commands.push({
      name: template.name,
      // From a file: shown in the completion list, which draws descriptions as they are.
      description: oneRow(template.description),
      // Its defaults are the repository's text too, shown in /help.
      usage: oneRow(usage(template)),
      run() {},
      message: (args) => expandInput(`/${template.name} ${args}`, resources),
    });
  }
  for (const skill of resources.skills) {
    commands.push({
      name: `skill:${skill.name}`,
      description: oneRow(skill.description),
      usage: "[request]",
      run() {},
      message: (args) => expandInput(`/skill:${skill.name} ${args}`, resources),
    });
  }
  return commands;
}

/**
 * A description (or a usage line) from a file, for the completion list and /help: no sequence a
 * terminal obeys, one row, and runs of blank glyphs counted (`⟨60 × U+2800⟩`) so that none wraps
 * a row of its own that reads as a command.
 */
function oneRow(description: string): string {
  return visibleText(terminalText(description).replace(/\s+/g, " ").trim());
}
