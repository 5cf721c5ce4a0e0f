/**
 * Where the path of a call really leads, for the permission dialog: a path whose real location
 * differs from what it reads (a symlink on the way) or lies outside the workspace is shown with
 * its real path, so a person approves the place, not the name. Read-only and best effort.
 */
import { basename, dirname, isAbsolute, relative, resolve } from "../../core/path.ts";
import type { ReviewRequest } from "../../sandbox/review.ts";

/** The real paths worth showing for `request`: none when its path is what it reads. */
export function realPathFacts(request: ReviewRequest, workspace: string): string[] {
  const args = request.args as Record<string, unknown> | null;
  if (args === null || typeof args !== "object" || typeof args.path !== "string") return [];
  const full = resolve(workspace, args.path);
  const real = realPathLoose(full);
  const rel = relative(workspace, real);
  const outside = rel === ".." || rel.startsWith("../") || isAbsolute(rel);
  if (real === full && !outside) return [];
  return [outside ? `${real} (outside the workspace)` : real];
}

/** Links followed on the way before a path is taken as unresolvable (a loop). */
const MAX_LINK_HOPS = 40;

/**
 * The real path of `path`, or of its nearest existing ancestor with the rest appended; a dangling
 * link on the way is followed to where it points, since a file written through it lands there.
 */
function realPathLoose(path: string, hops = 0): string {
  const rest: string[] = [];
  let at = path;
  for (;;) {
    try {
      return resolve(Deno.realPathSync(at), ...rest);
    } catch {
      const target = hops < MAX_LINK_HOPS ? linkTarget(at) : undefined;
      if (target !== undefined) {
        return realPathLoose(resolve(dirname(at), target, ...rest), hops + 1);
      }
      const parent = dirname(at);
      if (parent === at) return path;
      rest.unshift(basename(at));
      at = parent;
    }
  }
}

/** Where the symbolic link `path` points, or undefined when it is none. */
function linkTarget(path: string): string | undefined {
  try {
    return Deno.readLinkSync(path);
  } catch {
    return undefined;
  }
}
