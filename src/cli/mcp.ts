/**
 * `tern mcp list|tools|call|trust|untrust`: the workspace's MCP servers from the command line.
 * list, tools and call start the servers they need and close them (whole process groups)
 * before returning, also on Ctrl-C.
 */
import { warningLine } from "../core/warnings.ts";
import { loadConfig } from "../config/mod.ts";
import { observationText } from "../core/observation.ts";
import { InputError } from "./errors.ts";
import type { McpManager, McpServerStatus } from "../mcp/manager.ts";
import type { McpServerConfig } from "../mcp/types.ts";
import type { CommandLine } from "./args.ts";
import { EXIT_CANCELLED, EXIT_USAGE } from "./exit_codes.ts";
import { describeServer, openMcp } from "../harness/mcp_setup.ts";
import { processWriters, resolveWorkspace } from "./process_env.ts";
import type { RunFlags } from "./run.ts";
import { terminalWriters } from "./process_env.ts";
import { visibleText } from "../core/terminal_text.ts";

type McpLine = Extract<CommandLine, { command: "mcp" }>;

/** Runs one `tern mcp` action and returns its exit code. */
export async function runMcpCommand(line: McpLine, flags: RunFlags): Promise<number> {
  const workspace = resolveWorkspace(flags.cwd);
  const { config } = await loadConfig({ cwd: workspace, flags: flags.config });
  const { ternHome } = config;
  // Server names, tool descriptions, outputs and errors are the servers' words, and a project's
  // MCP config (its warnings quote server names) is the repository's.
  const write = terminalWriters(processWriters(), { json: line.json });
  const warn = (text: string) => write.err(`tern: warning: ${warningLine(text)}\n`);
  const { servers, manager } = await openMcp({
    ternHome,
    workspace,
    warn,
    rules: config.rules,
    keyVariables: config.keyVariables,
  });
  if (line.action === "trust" || line.action === "untrust") {
    return await changeTrust(line.action, line.names, servers, { ternHome, workspace }, write);
  }
  if (manager === undefined) {
    // A script reading the list gets one, empty, as `tern sessions list --json` gives.
    if (line.action === "list" && line.json) write.out("[]\n");
    write.err(
      `tern: no MCP servers are configured for "${workspace}": add them to .mcp.json, ` +
        ".tern/mcp.json or ~/.tern/mcp.json\n",
    );
    return line.action === "list" ? 0 : EXIT_USAGE;
  }
  // Ctrl-C stops the servers too: one still starting would hold the command until its
  // start-up timeout (minutes, as its config may say).
  const controller = new AbortController();
  const onInterrupt = () => {
    controller.abort();
    void manager.close();
  };
  Deno.addSignalListener("SIGINT", onInterrupt);
  const interrupted = () => {
    write.err("tern: interrupted\n");
    return EXIT_CANCELLED;
  };
  try {
    switch (line.action) {
      case "list":
        manager.start();
        await manager.settled();
        if (controller.signal.aborted) return interrupted();
        write.out(line.json ? JSON.stringify(manager.status()) + "\n" : listText(manager.status()));
        return 0;
      case "tools":
        return await showTools(
          manager,
          line.server,
          line.json,
          write,
          controller.signal,
          interrupted,
        );
      case "call":
        return await callTool(manager, line, controller.signal, write, interrupted);
    }
  } finally {
    Deno.removeSignalListener("SIGINT", onInterrupt);
    await manager.close();
  }
}

type Writers = ReturnType<typeof processWriters>;

function listText(statuses: McpServerStatus[]): string {
  const width = Math.max(...statuses.map((s) => s.name.length));
  return statuses.map((s) => {
    const tools = s.state === "READY" ? `${s.tools} tool${s.tools === 1 ? "" : "s"}` : "";
    const head = `${s.name.padEnd(width)}  ${s.state.padEnd(9)}  ${s.transport.padEnd(5)}  ` +
      `${tools.padEnd(9)}  ${s.scope} ${s.file}`;
    return s.error ? `${head}\n${" ".repeat(width + 2)}${s.error}\n` : `${head}\n`;
  }).join("");
}

async function showTools(
  manager: McpManager,
  server: string,
  json: boolean,
  write: Writers,
  signal: AbortSignal,
  interrupted: () => number,
): Promise<number> {
  const status = await startOrExplain(manager, server);
  if (signal.aborted) return interrupted();
  if (status.state !== "READY") {
    write.err(`tern: ${status.label} is ${status.state}: ${status.error ?? "no reason"}\n`);
    return 1;
  }
  const exposed = manager.tools().filter((tool) => tool.server === server);
  if (json) {
    const infos = manager.toolsOf(server);
    write.out(
      JSON.stringify(infos.map((info) => ({
        ...info,
        exposedAs: exposed.find((tool) => tool.tool === info.name)?.name,
      }))) + "\n",
    );
    return 0;
  }
  const own = new Map(manager.toolsOf(server).map((info) => [info.name, info.description]));
  for (const tool of exposed) {
    const mark = tool.readOnly ? "read-only" : "may change things";
    // The server's words on one line each, controls and invisible characters shown: a line
    // break in a name or description would forge another tool's entry on this screen, the one
    // a person reads before trusting the server. Its own description, not the model's copy
    // (which has no invisible characters left): a person sees that something was hidden.
    const words = own.get(tool.tool)?.trim() || tool.description;
    const summary = words.split(/\r\n|[\r\n\u0085\u2028\u2029]/)[0];
    write.out(`${tool.name}  (${visibleText(tool.tool)}, ${mark})\n  ${visibleText(summary)}\n`);
  }
  if (exposed.length === 0) write.err(`tern: MCP server "${server}" lists no tools\n`);
  return 0;
}

async function callTool(
  manager: McpManager,
  line: McpLine,
  signal: AbortSignal,
  write: Writers,
  interrupted: () => number,
): Promise<number> {
  let args: unknown;
  try {
    args = JSON.parse(line.args ?? "{}");
  } catch (error) {
    throw new InputError(
      `Invalid arguments for "${line.tool}": not JSON (${(error as Error).message}): ` +
        `pass an object, e.g. '{"message":"hi"}'`,
    );
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    throw new InputError(
      `Invalid arguments for "${line.tool}": expected a JSON object, e.g. '{"message":"hi"}'`,
    );
  }
  const status = await startOrExplain(manager, line.server);
  if (signal.aborted) return interrupted();
  if (status.state !== "READY") {
    write.err(`tern: ${status.label} is ${status.state}: ${status.error ?? ""}\n`);
    return 1;
  }
  const observation = await manager.call(line.server, line.tool!, args, signal)
    .catch((error: unknown) => {
      throw usage(error);
    });
  if (line.json) {
    write.out(JSON.stringify(observation) + "\n");
  } else if (observation.status === "SUCCEEDED") {
    write.out(observation.output.endsWith("\n") ? observation.output : `${observation.output}\n`);
  } else {
    write.err(`tern: ${observationText(observation)}\n`);
  }
  return observation.status === "SUCCEEDED" ? 0 : observation.code === "CANCELLED" ? 130 : 1;
}

/** Starts `server`; an unknown, disabled or untrusted one is a usage error saying why. */
async function startOrExplain(manager: McpManager, server: string): Promise<McpServerStatus> {
  const status = manager.status().find((s) => s.name === server);
  if (status?.state === "UNTRUSTED") throw usage(new Error(notTrusted(status)));
  try {
    return await manager.startServer(server);
  } catch (error) {
    throw usage(error);
  }
}

function notTrusted(status: McpServerStatus): string {
  if (status.trustable === false) {
    return `MCP server "${status.name}" from the project ("${status.file}") cannot start: ` +
      status.error;
  }
  if (status.error?.startsWith("needs trust again")) {
    return `MCP server "${status.name}" from the project ("${status.file}") ${status.error}`;
  }
  return `MCP server "${status.name}" comes from the project ("${status.file}") and is not ` +
    `trusted yet: check what it runs, then \`tern mcp trust ${status.name}\``;
}

async function changeTrust(
  action: "trust" | "untrust",
  names: readonly string[],
  servers: readonly McpServerConfig[],
  where: { ternHome: string; workspace: string },
  write: Writers,
): Promise<number> {
  const { trustServers, untrustServers } = await import("../mcp/trust.ts");
  const { unpinnableReasons } = await import("../mcp/_pinned_files.ts");
  const project = servers.filter((server) => server.scope === "project");
  for (const name of names) {
    const server = servers.find((s) => s.name === name);
    if (server === undefined) {
      const known = project.map((s) => `"${s.name}"`).join(", ") || "none";
      throw usage(new Error(`Unknown MCP server "${name}" (project servers: ${known})`));
    }
    if (server.scope === "user") {
      throw usage(
        new Error(`MCP server "${name}" comes from your own "${server.file}": it needs no trust`),
      );
    }
  }
  if (action === "trust" && names.length === 0) {
    // Trust is given one named server at a time, after seeing what it runs: a `.mcp.json`
    // the agent itself wrote must not start on a reflexive "trust everything". The list is
    // the answer the help promises, so it is no error.
    // One tern can never trust is listed with why, not as one to name.
    const untrusted = project.map((s) => {
      const never = unpinnableReasons(s.files ?? {});
      const why = never.length > 0 ? ` (tern cannot trust it: ${never.join(", ")})` : "";
      return `  ${s.name}: ${describeServer(s)}${why}\n`;
    }).join("");
    write.out(
      project.length === 0
        ? `There are no project MCP servers in "${where.workspace}" to trust\n`
        : `Name the servers to trust (tern mcp trust <server>…); the project's:\n${untrusted}`,
    );
    return 0;
  }
  const chosen = project.filter((s) => names.includes(s.name));
  if (action === "trust") {
    // A pin that never holds: recording it would say "Trusted" of a server that never starts.
    for (const server of chosen) {
      const never = unpinnableReasons(server.files ?? {});
      if (never.length === 0) continue;
      throw usage(
        new Error(`Cannot trust MCP server "${server.name}": ${never.join(", ")}; nothing trusted`),
      );
    }
  }
  if (action === "untrust") {
    await untrustServers(where.ternHome, where.workspace, names);
    write.out(`Untrusted ${names.length === 0 ? "every project MCP server" : names.join(", ")}\n`);
    return 0;
  }
  await trustServers(where.ternHome, where.workspace, chosen);
  for (const server of chosen) write.out(`Trusted ${server.name}: ${describeServer(server)}\n`);
  return 0;
}

function usage(error: unknown): InputError {
  const message = error instanceof Error ? error.message : String(error);
  return new InputError(message);
}
