/** The implementation of `request_permissions` (see `request_permissions.ts`). */
import { isAbsolute, join, resolve } from "../core/path.ts";
import * as z from "../core/zod.ts";
import { ToolError } from "../core/observation.ts";
import { defineTool, type Tool } from "../tools/define.ts";
import { PROTECTED_FOLDERS, realPathOf } from "../tools/paths.ts";
import type { PermissionGate } from "./permission_gate.ts";
import { canonicalHost, describeRequest, isInside } from "./request_permissions_policy.ts";

/** C0 controls and DEL: no path or command prefix a person can be shown as it is holds one. */
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

const entries = z.array(
  z.string().trim().min(1).refine((entry) => !CONTROL.test(entry), "holds a control character"),
).optional();

const parameters = z.strictObject({
  reason: z.string().trim().min(1),
  scope: z.enum(["turn", "session"]).optional(),
  read: entries,
  write: entries,
  hosts: z.array(
    z.string().trim().refine(
      isHost,
      'expected "host" or "host:port" (a port from 1 to 65535; no scheme, path or "*")',
    ),
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
      // Judged and shown as written, such a path would look like where it starts, not where
      // it leads.
      for (const path of [...request.read, ...request.write]) {
        const unseen = await unresolvedStep(path);
        if (unseen === undefined) continue;
        throw new ToolError(
          "INVALID_ARGUMENTS",
          `Cannot ask for "${path}": ${unseen}, so where it leads cannot be shown: name the ` +
            "real path",
        );
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

/**
 * Why `path` (an absolute path `realPathOf` gave) is not known to be real: a link still on its
 * way, which `realPathOf` could not follow (it gives the path as written then), or a step tern
 * cannot look at; undefined when each step that exists is not a link.
 */
async function unresolvedStep(path: string): Promise<string | undefined> {
  let at = "/";
  for (const part of path.split("/").filter((part) => part !== "")) {
    at = join(at, part);
    try {
      if ((await Deno.lstat(at)).isSymlink) {
        return `the link "${at}" on its way cannot be followed (a loop, or more links than ` +
          "the system follows)";
      }
    } catch (error) {
      // What does not exist yet holds no link.
      if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
        return undefined;
      }
      // (Deno's own refusal of `/sys` names a flag of Deno's, not what to do here.)
      const why = error instanceof Deno.errors.NotCapable
        ? "its own permissions keep it out"
        : error instanceof Error
        ? error.message
        : String(error);
      return `tern cannot look at "${at}" on its way (${why})`;
    }
  }
  return undefined;
}

const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const HOST = new RegExp(`^(?:${LABEL}(?:\\.${LABEL})*|\\[[0-9A-Fa-f:.]+\\])(?::(\\d{1,5}))?$`);

/** A host name, IPv4 or bracketed IPv6 address, with an optional port from 1 to 65535. */
function isHost(value: string): boolean {
  const found = HOST.exec(value);
  const port = found?.[1] === undefined ? undefined : Number(found[1]);
  return found !== null && (port === undefined || (port >= 1 && port <= 65_535));
}
