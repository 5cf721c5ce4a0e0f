/**
 * The `skill` tool: the model activates a skill from the index in its system prompt and gets
 * the body of its `SKILL.md`, or one file of the skill's folder. It reads only the skills
 * discovered for this turn, each confined to its own folder as it was found (`readSkillBody`,
 * `readSkillFile`: regular files, no symlink out, and a folder or `SKILL.md` swapped for a symlink
 * since is refused; what draws as nothing is removed, as from the skill itself), and changes
 * nothing: it runs in tern's process, through the permission gate like every tool (rules, audit
 * log, result budget), as a read-only host tool. A skill past the index's cap in the system
 * prompt is still read by name.
 */
import * as z from "../core/zod.ts";
import { ToolError } from "../core/observation.ts";
import { defineTool, type Tool } from "../tools/define.ts";
import {
  readSkillBody,
  readSkillFile,
  type Skill,
  SKILL_TOOL_NAME,
  skillText,
} from "../memory/skills.ts";

export { SKILL_TOOL_NAME };

const PARAMETERS = z.object({
  name: z.string().describe("The skill's name, as listed under Skills in the system prompt"),
  file: z.string().optional().describe(
    "A file the skill refers to, relative to its folder; omit it to read the skill itself",
  ),
}).strict();

/** The `skill` tool over `skills()`, the skills of the current turn. */
export function createSkillTool(skills: () => readonly Skill[]): Tool {
  return defineTool({
    name: SKILL_TOOL_NAME,
    description: "Read a skill's instructions (its SKILL.md) by name, or a file in its folder. " +
      "Call it when the task matches a skill's description, before you start.",
    parameters: PARAMETERS,
    readOnly: true,
    runsIn: "host",
    paths: () => [],
    async execute({ name, file }) {
      const skill = skills().find((candidate) => candidate.name === name);
      if (skill === undefined) {
        const names = skills().map((candidate) => candidate.name).join(", ") || "none";
        throw new ToolError("NOT_FOUND", `No skill is called "${name}" (skills: ${names})`);
      }
      try {
        if (file !== undefined) return { output: readSkillFile(skill, file) };
        return { output: skillText(skill, await readSkillBody(skill)) };
      } catch (error) {
        if (error instanceof ToolError) throw error;
        throw new ToolError(
          "POLICY_DENIED",
          error instanceof Error ? error.message : String(error),
        );
      }
    },
  });
}
