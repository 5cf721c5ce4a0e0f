/**
 * The slash commands that resources make: `/context` (what goes into the system prompt), one
 * `/name` per prompt template and one `/skill:name` per skill. A template's or a skill's
 * command is a message: what it renders is sent as the person's turn. Resources are read once,
 * when the commands load; a template added later counts at the next start.
 */
import { loadResources } from "../../memory/resources.ts";
import { usage } from "../../memory/templates.ts";
import {
  describeContext,
  formatContextReport,
  type MemoryInputs,
} from "../../harness/resource_prompt.ts";
import { expandInput } from "../../harness/resource_input.ts";
import { terminalText } from "../../core/terminal_text.ts";
import type { SlashCommand } from "./commands.ts";

export interface ResourceCommandDeps {
  workspace: string;
  ternHome: string;
  /** The remembered facts and how many a message gets. */
  memory: () => Omit<MemoryInputs, "task">;
  /** Names taken by built-in commands: a template of such a name is left out, with a note. */
  taken: ReadonlySet<string>;
  /** Told about a template left out. */
  warn: (text: string) => void;
}

/** `/context`, and the commands of the templates and skills found now. */
export async function resourceCommands(deps: ResourceCommandDeps): Promise<SlashCommand[]> {
  const resources = await loadResources(deps.workspace, deps.ternHome);
  const commands: SlashCommand[] = [{
    name: "context",
    description: "what goes into the system prompt: each part, its file and its tokens; " +
      "with a message, the remembered facts it would get",
    usage: "[message]",
    whileRunning: true,
    async run(context, args) {
      const memory = { ...deps.memory(), task: args.trim() === "" ? undefined : args.trim() };
      const report = await describeContext(deps.workspace, deps.ternHome, memory);
      context.print(formatContextReport(report).map(terminalText));
    },
  }];
  for (const template of resources.templates) {
    if (deps.taken.has(template.name) || template.name === "context") {
      deps.warn(
        `Prompt template "${template.path}" is not offered as /${template.name}: a built-in ` +
          "command has that name",
      );
      continue;
    }
    commands.push({
      name: template.name,
      // From a file: shown in the completion list, which draws descriptions as they are.
      description: terminalText(template.description),
      usage: usage(template),
      run() {},
      message: (args) => expandInput(`/${template.name} ${args}`, resources),
    });
  }
  for (const skill of resources.skills) {
    commands.push({
      name: `skill:${skill.name}`,
      description: terminalText(skill.description),
      usage: "[request]",
      run() {},
      message: (args) => expandInput(`/skill:${skill.name} ${args}`, resources),
    });
  }
  return commands;
}
