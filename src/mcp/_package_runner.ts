/**
 * Package runners (`npx`, `npm exec`, `pnpm dlx`, `bunx`, …) run a package from the workspace's
 * `node_modules` when one there holds it, and fetch it only otherwise: `npx -y
 * @modelcontextprotocol/server-memory` runs whatever a repository, or a command since, put under
 * `node_modules/@modelcontextprotocol/server-memory`. A package manager's scripts find programs in
 * `node_modules/.bin` too (`npm run srv`, `yarn srv`). Trust cannot pin a whole `node_modules`, so
 * such a server is trusted only while none lies where the program looks.
 */
import { basename, dirname, join, relative } from "../core/path.ts";
import { lstatOrNull } from "../core/verified_open.ts";
import { isInside } from "./project_paths.ts";
import { MISSING, unpinnable } from "./_pinned_files.ts";

/** Programs that run packages, or scripts that run them, from `node_modules`. */
const RUNNERS = new Set(["npx", "pnpx", "bunx", "npm", "pnpm", "yarn", "bun"]);

/**
 * The pins of the `node_modules` folders a package runner in `argv` would look in: in `cwd` and
 * each folder above it in the workspace, {@linkcode MISSING} while absent (creating one needs
 * trust again), and a pin that never holds while present. None when no word of `argv` is such
 * a program.
 */
export function packageRunnerPins(
  argv: readonly string[],
  cwd: string,
  workspace: string,
): Record<string, string> {
  const runner = runnerIn(argv);
  if (runner === undefined) return {};
  const pins: Record<string, string> = {};
  for (let dir = cwd; isInside(workspace, dir); dir = dirname(dir)) {
    const folder = join(dir, "node_modules");
    pins[relative(workspace, folder)] = lstatOrNull(folder) === null ? MISSING : unpinnable(
      `\`${runner}\` runs packages from the workspace's node_modules when it holds them, and ` +
        "trust cannot pin a node_modules; define the server in ~/.tern/mcp.json, where you " +
        "choose what it runs",
    );
    if (dir === workspace || dirname(dir) === dir) break;
  }
  return pins;
}

/** The program in `argv` that runs packages (`npx`, `npm`), or undefined. */
function runnerIn(argv: readonly string[]): string | undefined {
  return argv.map((word) => basename(word)).find((program) => RUNNERS.has(program));
}
