/**
 * A tool registry whose file-changing tools run inside a lock per file: plan nodes run at once,
 * and two of them never write the same file at the same time.
 */
import { basename, dirname, join, resolve } from "node:path";
import { ToolRegistry } from "../tools/registry.ts";

/** Runs `run` while holding the lock of `path` (absolute). */
export type AroundWrite = <T>(path: string, run: () => Promise<T>) => Promise<T>;

/** Tools that change files, by name; their `path` argument names the file. */
const WRITING_TOOLS: ReadonlySet<string> = new Set(["write", "edit"]);

/** `tools`, with every write or edit call run inside `around` for its file's absolute path. */
export function lockedWrites(
  tools: ToolRegistry,
  workspace: string,
  around: AroundWrite,
): ToolRegistry {
  return new ToolRegistry(tools.names.map((name) => {
    const tool = tools.get(name)!;
    if (!WRITING_TOOLS.has(name)) return tool;
    return {
      name,
      description: tool.description,
      readOnly: tool.readOnly,
      parameters: tool.parameters,
      run: (args, ctx) => {
        const path = (args as { path?: unknown } | null)?.path;
        if (typeof path !== "string") return tool.run(args, ctx);
        return around(lockKey(resolve(workspace, path)), () => tool.run(args, ctx));
      },
    };
  }));
}

/**
 * The file's real path, so two spellings of one file (through a symlink) take one lock; for a
 * file not there yet, its folder's real path and its name.
 */
function lockKey(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    try {
      return join(Deno.realPathSync(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}
