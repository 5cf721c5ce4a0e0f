/**
 * The system prompt for a coding turn, with the project's rules (AGENTS.md) in it. It is
 * rebuilt for every run and is never part of what compaction summarises, so the rules reach
 * the model whole after every compaction. Skills and other resources join it later.
 */
import { promptName } from "../core/prompt_name.ts";
import { join } from "../core/path.ts";
import { readWorkspaceText, type Warn } from "../config/workspace_file.ts";

/** The project rules file read from the workspace root. */
export const PROJECT_RULES_FILE = "AGENTS.md";
/** Longest rules file taken whole, in characters; a longer one is cut with a note. */
const MAX_RULES_CHARS = 32_000;

export interface SystemPromptOptions {
  workspace: string;
  toolNames: string[];
  /** The tools' own lines on when to use them (`ToolRegistry.guidance()`), after the first rule. */
  toolGuidance?: string[];
  /** ISO date of today; passed in so the prompt is reproducible in tests. */
  today: string;
  /** The project's rules (the text of AGENTS.md), when it has any. */
  projectRules?: string;
  /**
   * The text of a `SYSTEM.md`: it replaces the default instructions (who tern is, how to work);
   * the workspace, date and tool lines, the context files, skills and memory stay.
   */
  instructions?: string;
  /** Context files (AGENTS.md, CLAUDE.md at every level), each with the path it came from. */
  contextFiles?: ReadonlyArray<{ path: string; text: string }>;
  /** The skills index section (`skillsPromptSection` in src/memory/skills.ts). */
  skills?: string;
  /** The memory files' section (`memoryFilesPromptSection` in src/memory/memory_files.ts). */
  memoryFiles?: string;
  /** `APPEND_SYSTEM.md` texts, appended last. */
  appendSystem?: readonly string[];
}

/** The default instructions' first line; a `SYSTEM.md` replaces it and "How to work". */
const IDENTITY = "You are tern, a coding agent working in the user's project from their terminal.";

export function buildSystemPrompt(options: SystemPromptOptions): string {
  const custom = options.instructions?.trim();
  return [
    custom ?? IDENTITY,
    ...(custom ? [""] : []),
    `Workspace: ${options.workspace} (all relative paths resolve here; you cannot leave it).`,
    `Today: ${options.today}.`,
    `Tools: ${options.toolNames.join(", ")}.`,
    // A SYSTEM.md replaces "How to work", not what the tools say about themselves.
    ...(custom ? toolNotes(options.toolGuidance ?? []) : defaultHowTo(options.toolGuidance ?? [])),
    ...(options.projectRules
      ? ["", `Project rules (${PROJECT_RULES_FILE}, follow them):`, "", options.projectRules.trim()]
      : []),
    ...contextSection(options.contextFiles ?? []),
    ...(options.skills ? ["", options.skills] : []),
    ...(options.memoryFiles ? ["", options.memoryFiles] : []),
    ...(options.appendSystem ?? []).flatMap((text) => ["", text.trim()]),
  ].join("\n");
}

function contextSection(files: ReadonlyArray<{ path: string; text: string }>): string[] {
  if (files.length === 0) return [];
  return [
    "",
    "Project context files (follow them; a file deeper in the tree is more specific and wins):",
    ...files.flatMap((file) => ["", `## ${promptName(file.path)}`, "", file.text.trim()]),
  ];
}

function toolNotes(guidance: readonly string[]): string[] {
  return guidance.length === 0 ? [] : ["", "Tool notes:", ...guidance.map((line) => `- ${line}`)];
}

function defaultHowTo(guidance: readonly string[]): string[] {
  return [
    "",
    "How to work:",
    "- Look before you change: read the files you edit, search with grep/glob instead of guessing.",
    ...guidance.map((line) => `- ${line}`),
    "- Make focused edits with `edit`; use `write` for new files or full rewrites.",
    "- Run commands with `bash` to build, test and verify; read their exit codes.",
    "- Tool results start with SUCCEEDED or ERROR[CODE]; on an error, change your approach rather",
    "  than repeating the same call.",
    "- When the task is done, answer with a short summary of what you changed and how you checked it.",
  ];
}

/**
 * The text of `<workspace>/AGENTS.md`, cut at 32,000 characters; undefined when there is no
 * readable file. Read like every file tern takes from the workspace (src/config/workspace_file.ts):
 * a symlink out of the workspace or a hard link is skipped, and `warn` says so; the characters
 * that draw as nothing (tags, bidi, zero-width) are removed. Synchronous: one small read on the
 * way to the first request.
 */
export function readProjectRules(workspace: string, warn?: Warn): string | undefined {
  let text: string | undefined;
  try {
    text = readWorkspaceText(workspace, join(workspace, PROJECT_RULES_FILE), {
      what: "project rules",
      // Instructions a person reviews: what draws as nothing is not sent either.
      instructions: true,
      warn,
      // Enough bytes for more than the characters kept, whatever their width in UTF-8.
      maxBytes: 4 * MAX_RULES_CHARS + 4,
      head: true,
    });
  } catch {
    return undefined;
  }
  if (text === undefined) return undefined;
  if (text.length <= MAX_RULES_CHARS) return text;
  return `${text.slice(0, MAX_RULES_CHARS)}\n[${PROJECT_RULES_FILE} is longer: the rest was cut]`;
}
