/**
 * A tool registry whose file-changing calls run inside a lock per file: plan nodes run at once,
 * and two of them never write the same file at the same time. Which files a call writes is what
 * its tool declares (`Tool.paths`), so a new writing tool is locked without a change here.
 */
import { basename, dirname, join, resolve } from "../core/path.ts";
import type { Tool } from "../tools/define.ts";
import type { ToolRegistry } from "../tools/registry.ts";

/** Runs `run` while holding the lock of `path` (absolute). */
export type AroundWrite = <T>(path: string, run: () => Promise<T>) => Promise<T>;

/** `tools`, with every call that writes files run inside `around` for each file it writes. */
export function lockedWrites(
  tools: ToolRegistry,
  workspace: string,
  around: AroundWrite,
): ToolRegistry {
  return tools.derive(tools.names.map((name) => {
    const tool = tools.get(name)!;
    // Read-only tools write nothing: their calls skip the declaration and the locks.
    if (tool.readOnly) return tool;
    const locked: Tool = {
      name,
      description: tool.description,
      readOnly: tool.readOnly,
      runsIn: tool.runsIn,
      paths: (args) => tool.paths(args),
      parameters: tool.parameters,
      run: async (args, ctx) => {
        const written = (await tool.paths(args)).filter((path) => path.write);
        // One order for every caller, so two calls writing the same two files cannot deadlock.
        const keys = [...new Set(written.map((p) => lockKey(resolve(workspace, p.path))))].sort();
        const runLocked = (index: number): ReturnType<Tool["run"]> =>
          index === keys.length
            ? tool.run(args, ctx)
            : around(keys[index], () => runLocked(index + 1));
        return await runLocked(0);
      },
    };
    return locked;
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
