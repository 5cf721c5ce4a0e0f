/**
 * Skills (the Agent Skills format): a folder with a `SKILL.md` whose YAML frontmatter has a
 * `name` and a `description`. Found under `<ternHome>/skills/` (the person's) and, in the
 * workspace, `.tern/skills/`, `.agents/skills/` and `.claude/skills/` (the project's). Only the
 * index (name, description, path) goes into the system prompt; the body is read when the skill
 * is activated (the `skill` tool, `/skill:name`, `tern run --skill`).
 *
 * Discovery is a bounded walk: at most {@linkcode MAX_SKILL_DEPTH} folders deep, at most
 * {@linkcode MAX_SKILL_ENTRIES} entries per root, no symlinked folder followed, and a skill's
 * own folder not searched further. A `SKILL.md` is read with the file tools' confinement
 * (confined to its root), its first {@linkcode MAX_SKILL_HEAD_BYTES} bytes at discovery.
 * At most {@linkcode MAX_SKILLS} `SKILL.md` files of each level (the person's, the project's)
 * are read at all. A malformed file is a diagnostic naming it and the line; a name found twice
 * keeps the person's own skill (a repository cannot replace it), then the project's `.tern` over
 * `.agents` over `.claude`, with a note.
 *
 * Skills are found once per turn, and read when activated, after the model may have run commands:
 * each read is confined to the skill's root again, and to the real paths found at discovery (the
 * folder's, and its `SKILL.md`'s), so a folder or `SKILL.md` swapped for a symlink since is refused.
 * The index in the system prompt is capped at {@linkcode MAX_SKILL_INDEX_CHARS}; the skills past
 * it are counted in one line, and the `skill` tool still reads them by name.
 */
import { promptName } from "../core/prompt_name.ts";
import { subfolders, walkFolders } from "./bounded_walk.ts";
import { dirname, isInside, join, relative, sep } from "../core/path.ts";
import { type ReadRefusal, readWorkspaceText } from "../config/workspace_file.ts";
import { realPathOrNull } from "../core/verified_open.ts";
import { FrontmatterError, parseFrontmatter, stringField } from "./frontmatter.ts";
import { folderOutside, headerOwner, refuseFor, type ResourceLevel } from "./context_files.ts";

/** The `skill` tool's name, as the skills index in the system prompt names it. */
export const SKILL_TOOL_NAME = "skill";

/** How deep below a skills root a `SKILL.md` is looked for. */
export const MAX_SKILL_DEPTH = 4;
/** The most folder entries read under one skills root. */
export const MAX_SKILL_ENTRIES = 2_000;
/** The most skills in the index. */
export const MAX_SKILLS = 200;
/** What discovery reads of a `SKILL.md`: enough for any frontmatter. */
export const MAX_SKILL_HEAD_BYTES = 16 * 1024;
/** Longest skill body given to the model, in characters; a longer one is cut with a note. */
export const MAX_SKILL_BODY_CHARS = 64_000;
/** The most characters of a description in the index. */
const MAX_DESCRIPTION_CHARS = 1_024;
/**
 * The most characters of skill entries in the system prompt's index: about 3,000 tokens, paid by
 * every request. It lists 10 skills even at the longest description, and about 80 with a typical
 * one of 100 characters; without it, 200 skills of 1 KB put about 56,000 tokens in each request.
 */
export const MAX_SKILL_INDEX_CHARS = 12_000;
/** Agent Skills names: lowercase letters, digits and single hyphens, 1 to 64 characters. */
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** One discovered skill. */
export interface Skill {
  name: string;
  description: string;
  /** Absolute path of its `SKILL.md`. */
  path: string;
  /** Its folder: the files it refers to are read from here. */
  dir: string;
  /** The real path of `dir` at discovery: every later read must still lie below it. */
  realDir: string;
  /** The real path of its `SKILL.md` at discovery: its body is read from there only. */
  realPath: string;
  /** The root it was found under; reads of it are confined there. */
  root: string;
  level: ResourceLevel;
  /**
   * What the model may not read (a project's skill: its `SKILL.md` and every file read from its
   * folder), applied again at each read.
   */
  refuse?: ReadRefusal;
}

/** The skills found, and what was wrong on the way. */
export interface SkillIndex {
  skills: Skill[];
  /** One line each: a malformed file, a duplicate name, a cap reached. */
  diagnostics: string[];
}

/**
 * The skills roots, in precedence order (the first to have a name keeps it): the person's own
 * first, so a repository's skill never stands in for one of theirs.
 */
export function skillRoots(
  workspace: string,
  ternHome: string,
): Array<{ root: string; level: ResourceLevel }> {
  return [
    { root: join(ternHome, "skills"), level: "user" },
    { root: join(workspace, ".tern", "skills"), level: "project" },
    { root: join(workspace, ".agents", "skills"), level: "project" },
    { root: join(workspace, ".claude", "skills"), level: "project" },
  ];
}

/** Options of {@linkcode discoverSkills}. */
export interface DiscoverSkillsOptions {
  /** False: the person's own skills are not searched (see `loadResources`). Default true. */
  personal?: boolean;
}

/**
 * Finds the skills of `workspace` and of the person (see the module notes); a project's skill
 * files are read only where `refuse` lets the model read them.
 */
export async function discoverSkills(
  workspace: string,
  ternHome: string,
  refuse: ReadRefusal,
  options: DiscoverSkillsOptions = {},
): Promise<SkillIndex> {
  const skills: Skill[] = [];
  const diagnostics: string[] = [];
  const byName = new Map<string, Skill>();
  // Counted per level before a file is read: a repository's many skills never crowd out the
  // person's own, and what is past the cap costs no reading or parsing.
  const read: Record<ResourceLevel, number> = { user: 0, project: 0, nested: 0 };
  // Those past the cap, told in one line per level: a repository's thousands of skill folders
  // would otherwise bury every other warning under a line each.
  const leftOut = new Map<ResourceLevel, { first: string; count: number }>();
  const home = realPathOrNull(ternHome);
  for (const { root, level } of skillRoots(workspace, ternHome)) {
    if (level === "user" && options.personal === false) continue;
    // Tern's home is never the project's (tern started in the home folder has `~/.tern/skills`
    // as its `.tern/skills`): its skills are the person's, read as theirs or not at all.
    const real = level !== "user" && home !== null ? realPathOrNull(root) : null;
    if (home !== null && real !== null && isInside(home, real)) continue;
    const confine = level === "user" ? ternHome : workspace;
    const outside = folderOutside(confine, root);
    if (outside !== undefined) {
      diagnostics.push(outside);
      continue;
    }
    for (const path of findSkillFiles(root, diagnostics)) {
      if (read[level] >= MAX_SKILLS) {
        const past = leftOut.get(level);
        if (past === undefined) leftOut.set(level, { first: path, count: 1 });
        else past.count++;
        continue;
      }
      read[level]++;
      const skill = await readSkillHead(
        confine,
        path,
        level,
        diagnostics,
        refuseFor(level, refuse),
      );
      if (skill === undefined) continue;
      const kept = byName.get(skill.name);
      if (kept !== undefined) {
        diagnostics.push(
          `Skill "${skill.name}" in "${path}" is not used: "${kept.path}" has the same name ` +
            `and takes precedence`,
        );
        continue;
      }
      byName.set(skill.name, skill);
      skills.push(skill);
    }
  }
  for (const [level, { first, count }] of leftOut) {
    const which = count === 1 ? `Skill "${first}" is` : `${count} skills, from "${first}" on, are`;
    diagnostics.push(
      `${which} not used: there are more than ${MAX_SKILLS} ${
        level === "user" ? "of your own" : "in the project"
      }`,
    );
  }
  return { skills, diagnostics };
}

/** The `SKILL.md` files under `root`, breadth first, bounded (see the module notes). */
function findSkillFiles(root: string, diagnostics: string[]): string[] {
  const found: string[] = [];
  const complete = walkFolders(
    root,
    { levels: MAX_SKILL_DEPTH + 1, entries: MAX_SKILL_ENTRIES },
    (dir, entries) => {
      // A skill's folder is not searched further: its files are the skill's own.
      if (dir !== root && entries.some((entry) => entry.name === "SKILL.md")) {
        found.push(join(dir, "SKILL.md"));
        return [];
      }
      return subfolders(dir, entries);
    },
  );
  if (!complete) {
    diagnostics.push(
      `Skills under "${root}" were not all searched: more than ${MAX_SKILL_ENTRIES} entries`,
    );
  }
  return found.sort();
}

async function readSkillHead(
  confine: string,
  path: string,
  level: ResourceLevel,
  diagnostics: string[],
  refuse: ReadRefusal | undefined,
): Promise<Skill | undefined> {
  const dir = dirname(path);
  const realDir = realPathOrNull(dir);
  if (realDir === null) return undefined;
  let realPath: string | undefined;
  let text: string | undefined;
  try {
    text = readWorkspaceText(confine, path, {
      what: "skill",
      instructions: true,
      warn: (line) => diagnostics.push(line),
      refuse: (real, named) => {
        realPath = real;
        return refuse?.(real, named);
      },
      maxBytes: MAX_SKILL_HEAD_BYTES,
      head: true,
    });
  } catch (error) {
    diagnostics.push(error instanceof Error ? error.message : String(error));
    return undefined;
  }
  if (text === undefined || realPath === undefined) return undefined;
  let data: Record<string, unknown>;
  try {
    data = (await parseFrontmatter(text, path, headerOwner(level))).data;
  } catch (error) {
    if (!(error instanceof FrontmatterError)) throw error;
    diagnostics.push(error.message);
    return undefined;
  }
  const name = stringField(data, "name") ?? dir.split(sep).pop()!;
  const description = stringField(data, "description");
  if (!NAME.test(name) || name.length > 64) {
    diagnostics.push(
      `Skill "${path}" is not used: its name "${name}" must be 1 to 64 lowercase letters, ` +
        "digits and single hyphens (line 2)",
    );
    return undefined;
  }
  if (description === undefined) {
    diagnostics.push(
      `Skill "${path}" is not used: its frontmatter has no description (line 1)`,
    );
    return undefined;
  }
  return {
    name,
    description: oneLine(description).slice(0, MAX_DESCRIPTION_CHARS),
    path,
    dir,
    realDir,
    realPath,
    root: confine,
    level,
    ...(refuse === undefined ? {} : { refuse }),
  };
}

/**
 * The body of `skill` (its `SKILL.md` after the frontmatter), read again with the same
 * confinement, and only from the folder and file found at discovery; cut at
 * {@linkcode MAX_SKILL_BODY_CHARS} with a note.
 * @throws {Error} naming the file when it is gone, refused, malformed or moved by a symlink now.
 */
export async function readSkillBody(skill: Skill): Promise<string> {
  const gone = `Cannot read skill "${skill.name}": "${skill.path}" is gone`;
  confirmFolder(skill, `Cannot read skill "${skill.name}"`, gone);
  const refused: string[] = [];
  const text = readWorkspaceText(skill.root, skill.path, {
    what: "skill",
    instructions: true,
    warn: (line) => refused.push(line),
    refuse: (real, named) =>
      real === skill.realPath
        ? skill.refuse?.(real, named)
        : `it changed since the skill was found (it now leads to "${real}")`,
    maxBytes: 4 * MAX_SKILL_BODY_CHARS + 4,
    head: true,
  });
  if (text === undefined) throw new Error(refused[0] ?? gone);
  const { body } = await parseFrontmatter(text, skill.path, headerOwner(skill.level));
  if (body.length <= MAX_SKILL_BODY_CHARS) return body;
  return `${body.slice(0, MAX_SKILL_BODY_CHARS)}\n[${skill.path} is longer: the rest was cut ` +
    `at ${MAX_SKILL_BODY_CHARS} characters]`;
}

/**
 * A file `file` (relative to the skill's folder) that the skill refers to, read confined to the
 * skill's root and to the folder's real path found at discovery, capped like a workspace file
 * (1 MiB). It is the skill's instructions as much as its `SKILL.md` is, so the characters that
 * draw as nothing are removed from it too (src/core/invisible_text.ts): a `reference.md` a person
 * reviewed cannot hold an order only the model reads.
 * @throws {Error} when the path leaves the folder, the folder changed since discovery, or the
 *   file is missing or refused.
 */
export function readSkillFile(skill: Skill, file: string): string {
  const cannot = `Cannot read "${file}" of skill "${skill.name}"`;
  const path = join(skill.dir, file);
  const rel = relative(skill.dir, path);
  if (rel === "" || rel.startsWith("..") || rel.startsWith(sep)) {
    throw new Error(`${cannot}: it is outside its folder`);
  }
  confirmFolder(skill, cannot, `${cannot}: its folder "${skill.dir}" is gone`);
  const below = skill.realDir.endsWith(sep) ? skill.realDir : skill.realDir + sep;
  const refused: string[] = [];
  const text = readWorkspaceText(skill.root, path, {
    what: `file of skill "${skill.name}"`,
    instructions: true,
    warn: (line) => refused.push(line),
    // Checked again here, on the path that is opened: the folder may be swapped after
    // confirmFolder().
    refuse: (real, named) =>
      real.startsWith(below)
        ? skill.refuse?.(real, named)
        : `it leads out of the skill's folder (to "${real}")`,
  });
  if (text !== undefined) return text;
  throw new Error(refused[0] ?? `${cannot}: no such file`);
}

/**
 * Throws when the skill's folder is gone, or its real path is no longer the one found at
 * discovery (a command swapped it for a symlink): what was found is not what would be read.
 */
function confirmFolder(skill: Skill, cannot: string, gone: string): void {
  const now = realPathOrNull(skill.dir);
  if (now === null) throw new Error(gone);
  if (now !== skill.realDir) {
    throw new Error(
      `${cannot}: its folder "${skill.dir}" changed since the skill was found (it now leads to ` +
        `"${now}"); skills are found again at the next turn`,
    );
  }
}

/**
 * The system prompt section that lists `skills`, the person's first, then in their order, up to
 * {@linkcode MAX_SKILL_INDEX_CHARS} of entries, then one line counting the rest; undefined when
 * there are none.
 */
export function skillsPromptSection(skills: readonly Skill[]): string | undefined {
  if (skills.length === 0) return undefined;
  const lines = [
    "Skills (instructions for particular tasks; when a task matches a description, call the " +
    "`skill` tool with its name to read it before you start):",
  ];
  let chars = 0;
  // The person's own skills first: a repository's many skills never push them out of the index.
  const ordered = [
    ...skills.filter((skill) => skill.level === "user"),
    ...skills.filter((skill) => skill.level !== "user"),
  ];
  for (const skill of ordered) {
    const line = `- ${skill.name}: ${skill.description} (${promptName(skill.path)})`;
    if (chars + line.length > MAX_SKILL_INDEX_CHARS) break;
    chars += line.length + 1;
    lines.push(line);
  }
  const leftOut = skills.length - (lines.length - 1);
  if (leftOut > 0) {
    lines.push(
      `[${leftOut} more skills are not listed: the index is capped at ` +
        `${MAX_SKILL_INDEX_CHARS.toLocaleString("en-US")} characters; the skill tool reads one ` +
        "by name, and names them all when asked for a name it does not know]",
    );
  }
  return lines.join("\n");
}

function oneLine(text: string): string {
  return text.replace(/[\s\p{Cc}]+/gu, " ").trim();
}

/**
 * A skill's body as the model receives it: where it lives, then its instructions (the `skill`
 * tool's answer, and what `/skill:name` and `--skill` put before the task).
 */
export function skillText(skill: Skill, body: string): string {
  return [
    `Skill "${skill.name}" (${promptName(skill.path)}); files it names are relative to ` +
    `${promptName(`${skill.dir}/`)} ` +
    `(read them with the skill tool's "file").`,
    "",
    body.trim(),
  ].join("\n");
}
