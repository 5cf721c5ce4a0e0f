/**
 * /mcp: the MCP servers of the session — their state, tools and last error — and trusting the
 * project's own servers without leaving the session.
 */
import type { McpServerStatus } from "../../mcp/manager.ts";
import type { Theme } from "../../tui/theme.ts";
import { oneLine } from "../../tui/format.ts";
import { describeServer, type OpenedMcp } from "../../harness/mcp_setup.ts";
import { unpinnableReasons } from "../../mcp/_pinned_files.ts";
import type { SlashCommand } from "./commands.ts";

/** The MCP side of the session, once opened. */
export interface McpAccess {
  /** The servers and their manager; rejects with the config error when the config is bad. */
  opened(): Promise<OpenedMcp>;
  /** Records trust for project servers (`tern mcp trust`). */
  trust(servers: OpenedMcp["servers"]): Promise<void>;
}

export function mcpCommands(access: McpAccess): SlashCommand[] {
  return [{
    name: "mcp",
    description: "MCP servers: state, tools, errors; /mcp tools <server>, /mcp trust <server>",
    usage: "[tools <server> | trust <server...>]",
    whileRunning: true,
    run: async (context, args) => {
      const { servers, manager } = await access.opened();
      const [action = "", ...names] = args.split(/\s+/).filter((word) => word !== "");
      if (manager === undefined) {
        context.notice(
          "no MCP servers are configured: add them to .mcp.json, .tern/mcp.json or " +
            "~/.tern/mcp.json",
        );
        return;
      }
      if (action === "") {
        context.print(statusLines(manager.status(), servers, context.theme));
        return;
      }
      if (action === "tools" && names.length === 1) {
        const tools = manager.tools().filter((tool) => tool.server === names[0]);
        const status = manager.status().find((s) => s.name === names[0]);
        if (status === undefined) throw new Error(`Unknown MCP server "${names[0]}"`);
        if (tools.length === 0) {
          context.notice(`"${names[0]}" is ${status.state} and offers no tools now`);
          return;
        }
        context.print(
          tools.map((tool) => {
            const mark = tool.readOnly ? ` ${context.theme.dim("(read-only)")}` : "";
            const about = oneLine(tool.description.split("\n")[0]);
            return `  ${oneLine(tool.name)}${mark}  ${context.theme.dim(about)}`;
          }),
        );
        return;
      }
      if (action === "trust") {
        if (names.length === 0) {
          // One named server at a time, after seeing what it runs (see /mcp).
          throw new Error(
            "Name the server to trust: /mcp trust <server> (/mcp shows what each runs)",
          );
        }
        const untrusted = manager.status().filter((s) =>
          s.state === "UNTRUSTED" && names.includes(s.name)
        );
        const unknown = names.filter((name) => !untrusted.some((s) => s.name === name));
        if (unknown.length > 0) {
          throw new Error(`Not an untrusted project server: ${unknown.join(", ")} (see /mcp)`);
        }
        const chosen = servers.filter((s) => untrusted.some((u) => u.name === s.name));
        await access.trust(chosen);
        for (const server of chosen) {
          context.notice(`trusted ${server.name}: ${describeServer(server)}`);
        }
        const started = await Promise.all(chosen.map((s) => manager.startServer(s.name)));
        context.print(statusLines(started, servers, context.theme));
        return;
      }
      throw new Error(
        `Unknown /mcp arguments "${args}": use /mcp, /mcp tools <server> or /mcp trust`,
      );
    },
  }];
}

function statusLines(
  statuses: readonly McpServerStatus[],
  servers: OpenedMcp["servers"],
  theme: Theme,
): string[] {
  return statuses.flatMap((s) => {
    const state = s.state === "READY"
      ? theme.green(s.state)
      : s.state === "FAILED"
      ? theme.red(s.state)
      : s.state === "UNTRUSTED"
      ? theme.yellow(s.state)
      : theme.dim(s.state);
    const tools = s.state === "READY" ? ` ${s.tools} tool${s.tools === 1 ? "" : "s"}` : "";
    // Names, commands and errors are the servers' and the project's words: one clean line each.
    const head = `  ${oneLine(s.name)} ${state}${tools} ${
      theme.dim(`${s.transport} · ${s.scope}`)
    }`;
    const server = servers.find((c) => c.name === s.name);
    if (
      s.state === "UNTRUSTED" && server !== undefined &&
      unpinnableReasons(server.files ?? {}).length === 0
    ) {
      // What it would run, for the person to check before trusting it.
      const runs = oneLine(`runs ${describeServer(server)}: /mcp trust ${s.name}`);
      return [head, `    ${theme.dim(runs)}`];
    }
    return s.error ? [head, `    ${theme.dim(oneLine(s.error))}`] : [head];
  });
}
