/** The implementation of `request_permissions` (see `request_permissions.ts`). */
import { isAbsolute, resolve } from "../core/path.ts";
import * as z from "../core/zod.ts";
import { ToolError } from "../core/observation.ts";
import { defineTool, type Tool } from "../tools/define.ts";
import { PROTECTED_FOLDERS, realPathOf } from "../tools/paths.ts";
import type { PermissionGate } from "./permission_gate.ts";
import { canonicalHost, describeRequest, isInside } from "./request_permissions_policy.ts";

const entries = z.array(z.string().trim().min(1)).optional();

const parameters = z.strictObject({
  reason: z.string().trim().min(1),
  scope: z.enum(["turn", "session"]).optional(),
  read: entries,
  write: entries,
  hosts: z.array(
    z.string().trim().refine(isHost, 'expected "host" or "host:port" (no scheme, path or "*")'),
  ).optional(),
  env: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "not a variable name")).optional(),
  commands: entries,
  without_sandbox: z.boolean().optional(),
});

/** Builds the tool body; loaded on the first call. */
export function createImpl(gate: Pick<PermissionGate, "requestGrant">): Tool {
  return defineTool({
    name: "request_permissions",
    description: "Ask for permissions the sandbox does not give",
    parameters,
    readOnly: false,
    runsIn: "host",
    paths: () => [],
    async execute(args, ctx) {
      const scope = args.scope ?? "turn";
      // Grants are real paths (Deno's flags and the tools compare real paths); one that does
      // not exist yet is judged and shown where the links on its way lead (`docs/new` with
      // `docs` a link to another folder is a path there).
      const absolute = (paths: readonly string[] = []) =>
        Promise.all(
          paths.map((path) =>
            realPathOf(isAbsolute(path) ? resolve(path) : resolve(ctx.workspace, path))
          ),
        );
      const request = {
        read: await absolute(args.read),
        write: await absolute(args.write),
        // As the commands' proxy reads them, so what is shown and compared is what is reached.
        net: [...new Set((args.hosts ?? []).map((host) => canonicalHost(host) ?? host))],
        env: args.env ?? [],
        commands: (args.commands ?? []).map((c) => c.trim().split(/\s+/).slice(0, 2).join(" ")),
        withoutSandbox: args.without_sandbox === true,
      };
      // The commands' view has its own of these folders: a grant there would say "Granted" and
      // show nothing of the host's.
      for (const [list, verb] of [[request.read, "reading"], [request.write, "writing"]] as const) {
        for (const path of list) {
          const folder = Object.keys(REPLACED_FOLDERS).find((dir) => isInside(dir, path));
          if (folder === undefined) continue;
          throw new ToolError(
            "POLICY_DENIED",
            `Cannot grant ${verb} "${path}": commands never see ${folder} as it is on the host ` +
              `(${REPLACED_FOLDERS[folder]}), so no grant there shows them anything`,
          );
        }
      }
      // A protected folder stays read-only whatever is granted: a grant there would say
      // "Granted" and change nothing.
      for (const path of request.write) {
        const folder = path.split("/").find((part) => Object.hasOwn(PROTECTED_FOLDERS, part));
        if (folder !== undefined) {
          throw new ToolError(
            "POLICY_DENIED",
            `Cannot grant writing "${path}": no grant opens ${folder} folders to writes ` +
              `(${PROTECTED_FOLDERS[folder]})`,
          );
        }
      }
      if (request.withoutSandbox && request.commands.length === 0) {
        throw new ToolError(
          "INVALID_ARGUMENTS",
          'without_sandbox needs "commands": name the command prefixes to run outside the sandbox',
        );
      }
      const nothing = request.read.length + request.write.length + request.net.length +
          request.env.length + request.commands.length === 0;
      if (nothing) {
        throw new ToolError(
          "INVALID_ARGUMENTS",
          "Nothing requested: name paths, hosts, env or commands",
        );
      }
      const summary = describeRequest(request, scope);
      const outcome = await gate.requestGrant(request, {
        scope,
        reason: args.reason,
        summary,
        callId: ctx.callId ?? "",
        signal: ctx.signal,
      });
      if (!outcome.allow) {
        throw new ToolError(
          "POLICY_DENIED",
          `Permission request denied (${outcome.reason}). Do not try to get around it; ` +
            "continue without it or tell the user what you need",
        );
      }
      return { output: `Granted: ${summary}` };
    },
  });
}

/**
 * The folders the commands' view replaces with its own (src/sandbox/bwrap.ts), and what it shows
 * there instead. `/tmp` is not one: a grant under it is shown (bound) into the private `/tmp`.
 */
const REPLACED_FOLDERS: Readonly<Record<string, string>> = {
  "/run": "their /run is empty: the sockets there reach the host's daemons",
  "/var/run": "their /var/run is empty: the sockets there reach the host's daemons",
  "/proc": "their /proc shows only the sandbox's own processes",
  "/dev": "their /dev holds only the basic devices",
};

const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const HOST = new RegExp(`^(?:${LABEL}(?:\\.${LABEL})*|\\[[0-9A-Fa-f:.]+\\])(?::(\\d{1,5}))?$`);

/** A host name, IPv4 or bracketed IPv6 address, with an optional port up to 65535. */
function isHost(value: string): boolean {
  const found = HOST.exec(value);
  return found !== null && (found[1] === undefined || Number(found[1]) <= 65_535);
}
