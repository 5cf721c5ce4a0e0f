/**
 * The system prompt as the resources make it, and the account of it that `tern context` and
 * `/context` show: each part, the file it came from and its size in estimated tokens.
 */
import { buildSystemPrompt } from "../agent/system_prompt.ts";
import { estimateTokens } from "../context/tokens.ts";
import { resourcePromptParts, type Resources } from "../memory/resources.ts";
import { usage } from "../memory/templates.ts";
import type { Fact } from "../memory/facts.ts";
import { rankedMemorySection, rankFacts } from "../memory/rank.ts";
import type { ReadGuardPlaces } from "./read_guard.ts";
import { visibleText } from "../core/terminal_text.ts";

/** The remembered facts, for the report: which a message would get, and why. */
export interface MemoryInputs {
  facts: readonly Fact[];
  /** The `memoryFacts` setting. */
  limit: number;
  /** The message to rank against; without one, none is chosen. */
  task?: string;
}

/** What a system prompt is built from besides the resources. */
export interface PromptInputs {
  workspace: string;
  toolNames: readonly string[];
  /** The tools' lines for the working rules (`ToolRegistry.guidance()`). */
  toolGuidance?: readonly string[];
  /** ISO date; default today. */
  today?: string;
}

/** The system prompt of a turn with `resources`. */
export function composeSystemPrompt(inputs: PromptInputs, resources: Resources): string {
  return buildSystemPrompt({
    workspace: inputs.workspace,
    toolNames: [...inputs.toolNames],
    toolGuidance: [...inputs.toolGuidance ?? []],
    today: inputs.today ?? new Date().toISOString().slice(0, 10),
    ...resourcePromptParts(resources),
  });
}

/** One part of the system prompt. */
export interface PromptPart {
  /**
   * What it is: `instructions`, `context file`, `skills index`, `memory file`, `memory topics
   * index`, `APPEND_SYSTEM.md`.
   */
  part: string;
  /** The file it came from, when one. */
  file?: string;
  /** `user`, `project` or `nested`, for a file. */
  level?: string;
  tokens: number;
  /** True when it was cut or left out at a cap. */
  cut?: boolean;
}

/** What `tern context` reports. */
export interface ContextReport {
  workspace: string;
  repositoryRoot?: string;
  parts: PromptPart[];
  /** Estimated tokens of the whole system prompt. */
  totalTokens: number;
  skills: Array<{ name: string; description: string; path: string; level: string }>;
  templates: Array<{ name: string; description: string; usage: string; path: string }>;
  /** The topic files under `.tern/memory/` listed in the index. */
  memoryTopics: Array<{ path: string; title: string }>;
  /** The remembered facts: how many, and those a message (`task`) would get, with why. */
  memory?: {
    saved: number;
    limit: number;
    task?: string;
    /** Estimated tokens of the section sent with `task`. */
    tokens: number;
    chosen: Array<{ id: string; scope: string; text: string; score: number; terms: string[] }>;
  };
  diagnostics: string[];
}

/** The account of the system prompt that `inputs` and `resources` make. */
export function contextReport(
  inputs: PromptInputs,
  resources: Resources,
  memory?: MemoryInputs,
): ContextReport {
  const { files } = resources;
  const prompt = resourcePromptParts(resources);
  const base = buildSystemPrompt({
    workspace: inputs.workspace,
    toolNames: [...inputs.toolNames],
    toolGuidance: [...inputs.toolGuidance ?? []],
    today: inputs.today ?? new Date().toISOString().slice(0, 10),
    instructions: prompt.instructions,
  });
  const parts: PromptPart[] = [
    files.system
      ? {
        part: "instructions (SYSTEM.md replaces the default)",
        file: files.system.path,
        level: files.system.level,
        tokens: estimateTokens(base),
        cut: files.system.cut,
      }
      : { part: "instructions (default)", tokens: estimateTokens(base) },
    ...files.context.map((file) => ({
      part: "context file",
      file: file.path,
      level: file.level,
      tokens: estimateTokens(file.text),
      cut: file.cut,
    })),
  ];
  if (prompt.skills) {
    parts.push({
      part: `skills index (${resources.skills.length})`,
      tokens: estimateTokens(prompt.skills),
    });
  }
  if (prompt.memoryFiles) {
    const { user, project, topics, topicsLeftOut } = resources.memory;
    for (const file of [user, project]) {
      if (file === undefined) continue;
      parts.push({
        part: "memory file",
        file: file.path,
        level: file.level,
        tokens: estimateTokens(file.text),
        cut: file.cut,
      });
    }
    const index = prompt.memoryFiles.split("\n").filter((line) => line.startsWith("- ")).join("\n");
    parts.push({
      part: `memory topics index (${topics.length} files, read when needed)`,
      tokens: estimateTokens(index),
      cut: topicsLeftOut > 0,
    });
  }
  for (const file of files.append) {
    parts.push({
      part: "APPEND_SYSTEM.md",
      file: file.path,
      level: file.level,
      tokens: estimateTokens(file.text),
      cut: file.cut,
    });
  }
  return {
    workspace: inputs.workspace,
    repositoryRoot: files.repositoryRoot,
    parts,
    totalTokens: estimateTokens(composeSystemPrompt(inputs, resources)),
    skills: resources.skills.map(({ name, description, path, level }) => ({
      name,
      description,
      path,
      level,
    })),
    templates: resources.templates.map((template) => ({
      name: template.name,
      description: template.description,
      usage: template.args.length > 0 ? usage(template) : "",
      path: template.path,
    })),
    memoryTopics: resources.memory.topics.map(({ rel, title }) => ({ path: rel, title })),
    ...(memory === undefined ? {} : { memory: memoryReport(memory) }),
    diagnostics: resources.diagnostics,
  };
}

function memoryReport(memory: MemoryInputs): NonNullable<ContextReport["memory"]> {
  const chosen = rankFacts(memory.facts, memory.task ?? "", memory.limit);
  return {
    saved: memory.facts.length,
    limit: memory.limit,
    task: memory.task,
    tokens: estimateTokens(rankedMemorySection(chosen) ?? ""),
    chosen: chosen.map(({ fact, score, terms }) => ({
      id: fact.id,
      scope: fact.scope,
      text: fact.text,
      score,
      terms,
    })),
  };
}

/** The report as text lines, for the terminal. */
export function formatContextReport(report: ContextReport): string[] {
  const lines = [
    `System prompt of ${report.workspace}: ~${report.totalTokens} tokens (estimated)`,
    ...(report.repositoryRoot ? [`Repository root: ${report.repositoryRoot}`] : []),
  ];
  for (const part of report.parts) {
    const where = part.file ? ` ${part.file} (${part.level})` : "";
    lines.push(
      `  ${String(part.tokens).padStart(7)}  ${part.part}${where}${part.cut ? " [cut]" : ""}`,
    );
  }
  if (report.skills.length > 0) {
    lines.push("Skills (index only; the body is read when used):");
    for (const skill of report.skills) {
      lines.push(`  ${skill.name}: ${skill.description} (${skill.path}, ${skill.level})`);
    }
  }
  if (report.templates.length > 0) {
    lines.push("Prompt templates:");
    for (const template of report.templates) {
      const call = [`/${template.name}`, template.usage].filter((word) => word !== "").join(" ");
      lines.push(`  ${call}: ${template.description} (${template.path})`);
    }
  }
  if (report.memoryTopics.length > 0) {
    lines.push("Memory topic files (index only; the model reads one when needed):");
    for (const topic of report.memoryTopics) lines.push(`  ${topic.path}: ${topic.title}`);
  }
  const memory = report.memory;
  if (memory !== undefined) {
    lines.push(
      `Memory: ${memory.saved} saved facts; each message gets the ${memory.limit} most ` +
        "relevant to it (BM25 over the facts; none that shares no word with it)",
    );
    if (memory.task === undefined) {
      lines.push("  (give a message, tern context <message>, to see which facts it would get)");
    } else {
      lines.push(`  for "${memory.task}": ${memory.chosen.length} facts, ~${memory.tokens} tokens`);
      for (const fact of memory.chosen) {
        lines.push(
          `  ${fact.id} ${fact.scope} score ${fact.score} (${fact.terms.join(", ")}): ${fact.text}`,
        );
      }
    }
  }
  if (report.diagnostics.length > 0) {
    lines.push("Problems:");
    for (const line of report.diagnostics) lines.push(`  ${line}`);
  }
  // One line each, whatever a repository names its files: line breaks, controls and invisible
  // characters in a path, name or title are shown, never obeyed (a name could forge a line).
  return lines.map((line) => visibleText(line, { spaces: 1_000 }));
}

/**
 * The account of `places.workspace`'s system prompt without a conversation (`tern context`, and
 * `/context` before the models connect): the built-in tools, the resources read now (as the
 * model would get them: `places` says what it may not read), the remembered facts. MCP servers'
 * tools are not in its tool line. `options.personal` false: as a model server a project's files
 * chose gets it, without the person's own resources and facts for every workspace.
 */
export async function describeContext(
  places: ReadGuardPlaces,
  memory?: MemoryInputs,
  options: { personal?: boolean; mask?: (text: string) => string } = {},
): Promise<ContextReport> {
  const personal = options.personal ?? true;
  const { workspace, ternHome } = places;
  const [
    { loadResources },
    { BUILTIN_MANIFEST },
    { REQUEST_PERMISSIONS_SPEC },
    { modelReadGuard },
  ] = await Promise.all([
    import("../memory/resources.ts"),
    import("../tools/mod.ts"),
    import("../agent/request_permissions.ts"),
    import("./read_guard.ts"),
  ]);
  const resources = await loadResources(workspace, ternHome, await modelReadGuard(places), {
    personal,
    mask: options.mask,
  });
  const sent = memory === undefined || personal
    ? memory
    : { ...memory, facts: memory.facts.filter((fact) => fact.scope !== "user") };
  const toolNames = [
    ...BUILTIN_MANIFEST.map((entry) => entry.name),
    REQUEST_PERMISSIONS_SPEC.name,
    ...(resources.skills.length > 0 ? ["skill"] : []),
  ];
  return contextReport({ workspace, toolNames }, resources, sent);
}
