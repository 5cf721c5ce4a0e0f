/** Shared by the subagent tests: a parent `tern run` and its children against one scripted server. */
import { lines } from "../../src/harness/subagents/child_process.ts";
import {
  CHILD_PROTOCOL_VERSION,
  type ChildLine,
  childLineSchema,
  type ChildRequest,
  parseLine,
} from "../../src/harness/subagents/protocol.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { loadSession } from "../../src/session/load.ts";
import { listSessions } from "../../src/session/paths.ts";
import type { SessionEntry } from "../../src/session/types.ts";
import { ternCommand } from "../support/tern_process.ts";

export function call(name: string, args: unknown, id: string): ScriptedReply {
  return { toolCalls: [{ id, name, arguments: JSON.stringify(args) }] };
}

/** The text of the request's first user message. */
export function firstUser(request: ModelRequest): string {
  const user = request.messages.find((message) => message.role === "user");
  return typeof user?.content === "string" ? user.content : "";
}

/** Every message text of the request, joined. */
export function allText(request: ModelRequest): string {
  return request.messages.map((message) => message.content).join("\n");
}

/** The number of the request's messages after the system prompt. */
export function turnMessages(request: ModelRequest): number {
  return request.messages.filter((message) => message.role !== "system").length;
}

/** Every session of `ternHome` with its entries. */
export async function sessionsOf(ternHome: string) {
  const infos = await listSessions(ternHome);
  return await Promise.all(infos.map(async (info) => ({ info, ...await loadSession(info.path) })));
}

/** The `subagent` entries' data of a session, of one kind. */
export function records(entries: readonly SessionEntry[], kind: string): Record<string, unknown>[] {
  return entries.filter((entry) => entry.type === "subagent").map((entry) =>
    (entry as { data: Record<string, unknown> }).data
  ).filter((data) => data.kind === kind);
}

/** Message entries that delivered `runId`. */
export function deliveries(entries: readonly SessionEntry[], runId: string): SessionEntry[] {
  return entries.filter((entry) => entry.type === "message" && entry.mailbox?.includes(runId));
}

/** Resolves when `check()` holds, checking every 20 ms (waits for a real condition). */
export async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A `tern child` process given its request; its stdin stays open until `closeStdin()`. */
export interface RunningChild {
  /** Its stdout's protocol lines, each parsed (a line that is not one throws). */
  lines: AsyncGenerator<ChildLine>;
  closeStdin(): Promise<void>;
  status: Promise<Deno.CommandStatus>;
  stderr: Promise<string>;
}

/** Starts the real `tern child` (as bin/tern does) in `cwd` and writes `request` on its stdin. */
export function startChild(
  request: ChildRequest,
  options: { cwd: string; env: Record<string, string>; baseUrl: string },
): RunningChild {
  const args = ["child", "--base-url", options.baseUrl];
  const process = ternCommand(args, { cwd: options.cwd, env: options.env }, "piped").spawn();
  const writer = process.stdin.getWriter();
  writer.write(new TextEncoder().encode(JSON.stringify(request) + "\n")).catch(() => {});
  async function* parsed(): AsyncGenerator<ChildLine> {
    for await (const line of lines(process.stdout)) {
      if (line.trim() !== "") yield parseLine(childLineSchema, line, "stdout line");
    }
  }
  return {
    lines: parsed(),
    closeStdin: () => writer.close().catch(() => {}),
    status: process.status,
    stderr: new Response(process.stderr).text(),
  };
}

/**
 * The pids of the `tern child` processes started for the model server at `baseUrl`: the parent
 * gives them its URL in their environment (never on their command line), which `ps e` shows.
 */
export function ternChildPids(baseUrl: string): number[] {
  const out = new Deno.Command("ps", { args: ["-e", "-ww", "-o", "pid=,args=", "e"] })
    .outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").map((line) => line.trim().split(" "))
    .filter((words) => words.includes("child") && words.includes(`TERN_BASE_URL=${baseUrl}`))
    .map((words) => Number(words[0]));
}

/**
 * A child's request as a parent sends it: the task "scan" with no tools, under the parent's
 * `permissions` (BYPASS, no network, the person answering its asks, unless given).
 */
export function childRequest(
  permissions: Partial<ChildRequest["permissions"]> = {},
): ChildRequest {
  return {
    type: "request",
    version: CHILD_PROTOCOL_VERSION,
    taskName: "scan",
    agentId: "agent-1",
    childSessionId: "00000000-0000-4000-8000-000000000001",
    runId: "run-1",
    parentSession: { id: "00000000-0000-4000-8000-000000000002", path: "/nowhere/parent.jsonl" },
    prompt: "scan",
    goal: "scan",
    cwd: "/",
    tools: { allow: [] },
    permissions: {
      profile: ":workspace",
      noSandbox: false,
      parentMode: "bypass",
      autoNetwork: "never",
      autoAskRules: "person",
      changes: [],
      escalationTimeoutMs: 1000,
      ...permissions,
    },
    timeoutMs: 60_000,
    model: { model: "scripted", thinking: "off" },
  };
}
