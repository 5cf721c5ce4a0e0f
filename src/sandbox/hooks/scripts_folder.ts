/**
 * The folder of the person's own hook scripts, `<ternHome>/hooks`: the one part of tern's home
 * (hidden from every command) that the person's hooks (`<ternHome>/settings.json`) see, and only
 * read-only. A project's hooks and the agent's commands never see it; commands cannot write it
 * (tern's home is hidden from them and refused to the file tools).
 */
import { isInside, join } from "../../core/path.ts";
import { realPathOrNull } from "../../core/verified_open.ts";
import type { ShellPlan } from "../types.ts";

/** The folder of tern's home whose scripts the person's own hooks may run. */
export const HOOK_SCRIPTS_FOLDER = "hooks";

/**
 * `plan` with `<ternHome>/hooks` shown read-only (`ternHome` a real path): tern's home masked
 * (an empty read-only folder) with that folder alone bound back. Only when it is a real folder
 * (not a link: one to `/` or `~/.ssh` would show what it leads to) and tern's home lies apart
 * from the working directory and every writable root, and outside `/tmp` (whose private copy
 * hides the host's); otherwise `plan` unchanged, and the hook does not find its script there.
 * Never throws.
 */
export function withHookScripts(plan: ShellPlan, ternHome: string): ShellPlan {
  const folder = hookScriptsShown(plan, ternHome);
  if (folder === null) return plan;
  return {
    ...plan,
    masked: [...new Set([...plan.masked ?? [], ternHome])],
    visible: [...plan.visible ?? [], folder],
  };
}

/**
 * The folder {@linkcode withHookScripts} would show the person's hooks for `plan`, or null when
 * it would show none (for `tern sandbox explain`). Never throws.
 */
export function hookScriptsShown(plan: ShellPlan, ternHome: string): string | null {
  const folder = join(ternHome, HOOK_SCRIPTS_FOLDER);
  if (!isRealFolder(folder)) return null;
  const apart = (path: string) => !isInside(ternHome, path) && !isInside(path, ternHome);
  const roots = plan.writable.flatMap((root) => [root, realPathOrNull(root) ?? root]);
  if (isInside("/tmp", ternHome) || !apart(plan.cwd) || !roots.every(apart)) return null;
  return folder;
}

/** True when `path` is a folder and its own real path. */
function isRealFolder(path: string): boolean {
  try {
    return Deno.lstatSync(path).isDirectory && Deno.realPathSync(path) === path;
  } catch {
    return false;
  }
}
