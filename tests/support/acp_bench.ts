/**
 * A bench for `tern acp` end-to-end tests: the ACP SDK's own client-side connection drives
 * `tern acp` as a subprocess, as an editor would, against the scripted model server.
 */
import {
  client,
  type ClientContext,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import { equal } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { type RecordedRequest, startScriptedServer } from "./scripted_server.ts";
import { declaredFlags, ROOT, tempWorkspace } from "./tern_process.ts";

export type Script = ScriptedReply[] | ((request: ModelRequest, index: number) => ScriptedReply);

export interface Editor {
  /** Every `session/update` received, in order. */
  updates: SessionNotification[];
  /** Every permission request received. */
  asked: RequestPermissionRequest[];
  /** How the editor answers the next permission requests (default: allow once). */
  answer: (
    request: RequestPermissionRequest,
  ) => RequestPermissionResponse["outcome"] | Promise<RequestPermissionResponse["outcome"]>;
  /** Unsaved buffers the editor returns for `fs/read_text_file`, by absolute path. */
  buffers: Map<string, string>;
  /** How the editor answers `fs/read_text_file` (default: from `buffers`). */
  read: (path: string) => string | Promise<string>;
  /** tern's process id. */
  pid: number;
  /** Stops reading tern's output (as a suspended editor): its pipe fills. */
  pauseReading(): void;
  /** Reads tern's output again. */
  resumeReading(): void;
}

export interface Bench {
  dir: string;
  home: string;
  requests: RecordedRequest[];
  /** Resolves once the model server has had `count` requests. */
  requested(count: number): Promise<void>;
  /** Runs `tern acp` and connects the SDK's client to it for `op`; returns tern's stderr. */
  connect(op: (ctx: ClientContext, editor: Editor) => Promise<void>): Promise<string>;
}

/**
 * Starts the scripted server and a workspace, runs `body`, cleans up. `options.args` are added
 * to `tern acp`'s command line, `options.env` to its environment.
 */
export async function withBench(
  script: Script,
  body: (bench: Bench) => Promise<void>,
  options: { args?: string[]; env?: Record<string, string> } = {},
) {
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  const server = await startScriptedServer(script as ScriptedReply[], {
    chunkDelayMs: 0,
    onRequest: () => {
      for (const wait of waiting) if (server.requests.length >= wait.count) wait.resolve();
    },
  });
  const ws = await tempWorkspace();
  const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test", ...options.env };
  const ternArgs = ["acp", "--base-url", server.baseUrl, "-m", "scripted", ...options.args ?? []];
  const connect: Bench["connect"] = async (op) => {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...declaredFlags(env, { cwd: ws.dir, args: ternArgs }),
        join(ROOT, "main.ts"),
        ...ternArgs,
      ],
      cwd: ws.dir,
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const stderr = new Response(child.stderr).text();
    let paused: PromiseWithResolvers<void> | undefined;
    const output = child.stdout.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        async transform(chunk, controller) {
          await paused?.promise;
          controller.enqueue(chunk);
        },
      }),
    );
    const editor: Editor = {
      pid: child.pid,
      pauseReading: () => paused ??= Promise.withResolvers<void>(),
      resumeReading: () => {
        paused?.resolve();
        paused = undefined;
      },
      updates: [],
      asked: [],
      answer: () => ({ outcome: "selected", optionId: "allow_once" }),
      buffers: new Map(),
      read: (path) => {
        const text = editor.buffers.get(path);
        if (text === undefined) throw new Error(`No buffer for ${path}`);
        return text;
      },
    };
    const app = client({ name: "test-editor" })
      .onNotification(methods.client.session.update, ({ params }) => {
        editor.updates.push(params);
      })
      .onRequest(methods.client.session.requestPermission, async ({ params }) => {
        editor.asked.push(params);
        return { outcome: await editor.answer(params) };
      })
      .onRequest(methods.client.fs.readTextFile, async ({ params }) => ({
        content: await editor.read(params.path),
      }));
    // The SDK's client never closes its output: the pipe is ended by hand, as an editor that
    // closes the connection would.
    const toChild = new TransformStream<Uint8Array, Uint8Array>();
    const hangUp = new AbortController();
    const piped = toChild.readable.pipeTo(child.stdin, { signal: hangUp.signal }).catch(() => {});
    let connected = false;
    try {
      await app.connectWith(ndJsonStream(toChild.writable, output), async (ctx) => {
        const init = await ctx.request(methods.agent.initialize, {
          protocolVersion: PROTOCOL_VERSION,
          clientCapabilities: { fs: { readTextFile: true, writeTextFile: false }, terminal: false },
        });
        equal(init.protocolVersion, PROTOCOL_VERSION);
        equal(init.agentCapabilities?.loadSession, true);
        await op(ctx, editor);
      });
      connected = true;
    } finally {
      if (!connected) child.kill("SIGKILL");
      hangUp.abort();
      await piped;
      // The editor closed the connection (its end of stdin): tern closes its sessions, exits 0.
      const status = await child.status;
      if (connected) equal(status.code, 0, await stderr);
    }
    return await stderr;
  };
  try {
    await body({
      dir: ws.dir,
      home: ws.home,
      requests: server.requests,
      requested: (count) => {
        if (server.requests.length >= count) return Promise.resolve();
        const { promise, resolve } = Promise.withResolvers<void>();
        waiting.push({ count, resolve });
        return promise;
      },
      connect,
    });
  } finally {
    await server.close();
    await ws.cleanup();
  }
}

/** The updates of one kind the editor received, in order. */
export function updatesOf(editor: Editor, kind: SessionUpdate["sessionUpdate"]) {
  return editor.updates.map((n) => n.update).filter((u) => u.sessionUpdate === kind);
}

/** The answer's text as the editor received it. */
export function agentText(editor: Editor): string {
  return updatesOf(editor, "agent_message_chunk").map((u) =>
    u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : ""
  ).join("");
}

/** A model reply that calls `write`. */
export function writeCall(id: string, path: string, content: string): ScriptedReply {
  return { toolCalls: [{ id, name: "write", arguments: JSON.stringify({ path, content }) }] };
}

/** Opens a session in `cwd` and sends `text` as one prompt: the session's id and the answer. */
export async function promptOnce(
  ctx: ClientContext,
  cwd: string,
  text: string,
): Promise<{ sessionId: string; stopReason: string }> {
  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
  const { stopReason } = await ctx.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text }],
  });
  return { sessionId, stopReason };
}
