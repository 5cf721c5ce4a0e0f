/**
 * A person's message that names a resource, made into the text the model gets: `/name args`
 * renders the prompt template `name`; `/skill:name args` (and `tern run --skill name`) puts
 * the skill's instructions before the rest. Shared by `tern run` and the interactive UI.
 */
import { readSkillBody, type Skill, skillText } from "../memory/skills.ts";
import { expandTemplateCommand } from "../memory/templates.ts";
import type { Resources } from "../memory/resources.ts";
import { UnknownSkillError } from "../memory/errors.ts";

const SKILL_COMMAND = /^\/skill:([^\s]+)(?:\s+([\s\S]*))?$/;

/**
 * The message for `text`: a skill's or a template's expansion, or `text` unchanged. With
 * `skill`, that skill's instructions come first whatever `text` is.
 * @throws {UnknownSkillError} for a skill no folder has.
 * @throws {TemplateError} for an unknown template or a bad argument.
 */
export async function expandInput(
  text: string,
  resources: Resources,
  skill?: string,
): Promise<string> {
  const { mask } = resources;
  if (skill !== undefined) return await skillMessage(findSkill(resources, skill), text, mask);
  const asked = SKILL_COMMAND.exec(text.trim());
  if (asked !== null) {
    return await skillMessage(findSkill(resources, asked[1]), asked[2] ?? "", mask);
  }
  return expandTemplateCommand(text, resources.templates) ?? text;
}

/**
 * The skill's instructions, then what the person asked with it. `mask`: the keys tern holds and
 * the key formats, masked in the body as in the `skill` tool's result (a command may have copied
 * `.env` into a `SKILL.md`).
 */
export async function skillMessage(
  skill: Skill,
  request: string,
  mask: (text: string) => string = (text) => text,
): Promise<string> {
  const body = skillText(skill, mask(await readSkillBody(skill)));
  return request.trim() === "" ? body : `${body}\n\n${request.trim()}`;
}

function findSkill(resources: Resources, name: string): Skill {
  const skill = resources.skills.find((candidate) => candidate.name === name);
  if (skill !== undefined) return skill;
  const names = resources.skills.map((candidate) => candidate.name).join(", ") || "none";
  throw new UnknownSkillError(`Unknown skill "${name}" (skills: ${names})`);
}
