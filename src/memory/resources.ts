/**
 * Every resource of one workspace at once: the prompt files (SYSTEM.md, APPEND_SYSTEM.md,
 * context files), the skills, the prompt templates and the memory files, with what was wrong on the way. Read
 * for every turn (so an edit counts at the next turn), and by `tern context`.
 */
import type { ReadRefusal, Warn } from "../config/workspace_file.ts";
import { type ContextFile, type PromptFiles, readPromptFiles } from "./context_files.ts";
import { discoverSkills, type Skill, skillsPromptSection } from "./skills.ts";
import { discoverTemplates, type PromptTemplate } from "./templates.ts";
import { type MemoryFiles, memoryFilesPromptSection, readMemoryFiles } from "./memory_files.ts";

/** A workspace's resources. */
export interface Resources {
  files: PromptFiles;
  skills: Skill[];
  templates: PromptTemplate[];
  /** `memory.md`, `MEMORY.md` and the topic files' index. */
  memory: MemoryFiles;
  /** Malformed, refused, duplicate or capped resources, one line each. */
  diagnostics: string[];
  /**
   * The `mask` they were loaded with, for what is read of them later for the model: a skill's
   * body that `/skill:name` or `--skill` puts before the task.
   */
  mask?: (text: string) => string;
}

/** The parts of the system prompt that resources give (see `buildSystemPrompt`). */
export interface ResourcePromptParts {
  instructions?: string;
  contextFiles: Array<{ path: string; text: string }>;
  skills?: string;
  memoryFiles?: string;
  appendSystem: string[];
}

/** Options of {@linkcode loadResources}. */
export interface LoadResourcesOptions {
  /**
   * False: nothing of the person's own in tern's home reaches the prompt — their `SYSTEM.md`,
   * `APPEND_SYSTEM.md`, context files, skills and `memory.md` — for a model server a project's
   * files chose (`TernConfig.serverChosenBy`). Their prompt templates stay: a template goes to
   * the model only when the person types its command. Default true.
   */
  personal?: boolean;
  /**
   * Masks the keys tern holds (and the key formats) in what the files say, as a `read` of them
   * is masked: a project's `MEMORY.md`, `AGENTS.md` or prompt template may be a link to a file
   * of the person's that holds one (`MEMORY.md -> backend/.env`). Omitted: nothing is masked.
   */
  mask?: (text: string) => string;
}

/**
 * Reads all of `workspace`'s and the person's resources; refused files go to `diagnostics`.
 * The project's files are read only where `refuse` lets the model read them (what the sandbox
 * keeps from tools: src/harness/read_guard.ts).
 */
export async function loadResources(
  workspace: string,
  ternHome: string,
  refuse: ReadRefusal,
  options: LoadResourcesOptions = {},
): Promise<Resources> {
  const personal = options.personal ?? true;
  const diagnostics: string[] = [];
  const warn: Warn = (line) => diagnostics.push(line);
  const files = readPromptFiles({ workspace, ternHome, warn, refuse, personal });
  const memory = readMemoryFiles(workspace, ternHome, refuse, warn);
  if (!personal) delete memory.user;
  const [skills, templates] = await Promise.all([
    // Without the person's skills searched at all: theirs take a name first, so finding and then
    // leaving them out would leave out a project's skill of the same name too.
    discoverSkills(workspace, ternHome, refuse, { personal }),
    discoverTemplates(workspace, ternHome, refuse, { personal }),
  ]);
  const loaded: Resources = {
    files,
    skills: skills.skills,
    templates: templates.templates,
    memory,
    diagnostics: [...diagnostics, ...skills.diagnostics, ...templates.diagnostics],
  };
  return options.mask === undefined ? loaded : masked(loaded, options.mask);
}

/**
 * `resources` with `mask` applied to what of them reaches the model: the prompt files', memory
 * files' and templates' text (defaults included), the topics' titles and the skills'
 * descriptions; a skill's body is read later, masked by the `skill` tool's gate or with `mask`.
 */
function masked(resources: Resources, mask: (text: string) => string): Resources {
  const file = (file: ContextFile): ContextFile => ({ ...file, text: mask(file.text) });
  const { files, memory } = resources;
  return {
    ...resources,
    mask,
    files: {
      ...files,
      ...(files.system === undefined ? {} : { system: file(files.system) }),
      append: files.append.map(file),
      context: files.context.map(file),
    },
    skills: resources.skills.map((skill) => ({ ...skill, description: mask(skill.description) })),
    templates: resources.templates.map((template) => ({
      ...template,
      description: mask(template.description),
      body: mask(template.body),
      args: template.args.map((arg) =>
        arg.default === undefined ? arg : { ...arg, default: mask(arg.default) }
      ),
    })),
    memory: {
      ...memory,
      ...(memory.user === undefined ? {} : { user: file(memory.user) }),
      ...(memory.project === undefined ? {} : { project: file(memory.project) }),
      topics: memory.topics.map((topic) => ({ ...topic, title: mask(topic.title) })),
    },
  };
}

/** What `resources` put into the system prompt. */
export function resourcePromptParts(resources: Resources): ResourcePromptParts {
  const { files } = resources;
  return {
    instructions: files.system?.text,
    contextFiles: files.context.map(({ path, text }) => ({ path, text })),
    skills: skillsPromptSection(resources.skills),
    memoryFiles: memoryFilesPromptSection(resources.memory),
    appendSystem: files.append.map((file) => file.text),
  };
}
