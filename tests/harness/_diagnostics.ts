/** EditDiagnostics over a real test sandbox, shared by the diagnostics tests. */
import { dirname } from "node:path";
import { EditDiagnostics } from "../../src/harness/diagnostics/edit_diagnostics.ts";
import type { DiagnosticsSettings } from "../../src/config/types.ts";
import type { SandboxRuntime } from "../../src/sandbox/runtime.ts";
import type { ReadRefusal } from "../../src/config/workspace_file.ts";
import { READ_ALL } from "../support/read_all.ts";

/** The folder of the Deno running the tests (deno check, deno lsp). */
export const DENO_DIR = dirname(Deno.execPath());
export const SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin";

/**
 * Diagnostics in `ws` run through `sandbox`'s shell; with `servers`, language servers start
 * through its `serverLaunch()` too (else only the one-shot checkers run). `path` is the PATH
 * programs are looked up on (default: this Deno's folder, then the system's).
 */
export function diagnosticsIn(
  sandbox: SandboxRuntime,
  ws: string,
  options: {
    path?: string;
    settings?: DiagnosticsSettings;
    servers?: boolean;
    /** What may not be read for the model (default: nothing refused). */
    refuse?: ReadRefusal;
  } = {},
): EditDiagnostics {
  return new EditDiagnostics({
    workspace: ws,
    refuse: options.refuse ?? READ_ALL,
    path: options.path ?? `${DENO_DIR}:${SYSTEM_PATH}`,
    settings: options.settings,
    shell: () =>
      Promise.resolve({
        run: sandbox.shell,
        kind: sandbox.shellKind,
        ...(options.servers
          ? {
            launch: (argv: readonly string[], launch: { cwd: string }) =>
              sandbox.serverLaunch(argv, launch),
          }
          : {}),
      }),
  });
}
