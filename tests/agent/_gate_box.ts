/**
 * A permission gate against the real sandbox for tests: a real worker, real bubblewrap, real
 * tools in a temporary folder that holds the workspace, a folder outside it, a home folder
 * with secrets and tern's own folder. Only the person and the reviewer are stand-ins.
 */
import { equal, match } from "node:assert/strict";
import { join } from "node:path";
import type { AgentEvent } from "../../src/core/events.ts";
import type { Observation } from "../../src/core/observation.ts";
import { PermissionGate } from "../../src/agent/permission_gate.ts";
import { createRequestPermissionsTool } from "../../src/agent/request_permissions.ts";
import type { AuditRecord } from "../../src/sandbox/audit.ts";
import type { AskPerson, PersonAnswer, Reviewer, ReviewRequest } from "../../src/sandbox/review.ts";
import { compileRules } from "../../src/sandbox/rules.ts";
import { createSandbox, type SandboxRuntime } from "../../src/sandbox/runtime.ts";
import { SecretMasker } from "../../src/sandbox/secrets.ts";
import type { PermissionRule, ReviewMode } from "../../src/config/schema.ts";
import { builtinLoader, type BuiltinToolOptions, builtinTools } from "../../src/tools/mod.ts";
import type { Tool } from "../../src/tools/define.ts";
import type { PermissionChange } from "../../src/session/types.ts";
import type { HookCommand } from "../../src/sandbox/hooks/config.ts";
import { HookRunner } from "../../src/sandbox/hooks/run.ts";

export const SECRET = "sk-test-gate-0123456789abcdef";

export interface Box {
  /** The temporary folder, also the home folder. */
  root: string;
  ws: string;
  outside: string;
  /** tern's own folder (not named ".tern", so only the sandbox's own exclusion protects it). */
  ternHome: string;
  /** What the reviewer was asked. */
  reviewed: string[];
  runtime: SandboxRuntime;
  gate: PermissionGate;
  tools: Map<string, Tool>;
  audit: AuditRecord[];
  events: AgentEvent[];
  asked: string[];
  /** The whole requests the person was shown, in order. */
  requests: ReviewRequest[];
  call(name: string, args: unknown): Promise<Observation>;
}

export async function withGate(
  options: {
    mode?: ReviewMode;
    answers?: PersonAnswer[];
    rules?: PermissionRule[];
    profile?: string;
    bwrapPath?: string;
    /** Receives the session-lasting approvals and grants. */
    changes?: PermissionChange[];
    /** Restored into the gate before `fn` runs. */
    restore?: PermissionChange[];
    /** The AUTO reviewer (a stand-in); every request it sees is recorded. */
    reviewer?: Reviewer;
    /** In AUTO, who decides a host the profile gives no network to (default: the reviewer). */
    autoNetwork?: "reviewer" | "person" | "never";
    /** In AUTO, who answers a call an "ask" rule matches (default: the reviewer). */
    autoAskRules?: "reviewer" | "person";
    /** Have the worker write Deno's permission audit (`AuditRecord.denoAudit`). */
    denoAudit?: boolean;
    /** Options of the built-in tools (web_fetch's test transport). */
    builtins?: BuiltinToolOptions;
    /** Lifecycle hooks, run in the sandbox's shell (their scripts are written by `fn`). */
    hooks?: HookCommand[];
  },
  fn: (box: Box) => Promise<void>,
): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ dir: "/var/tmp", prefix: "gate-" }));
  const ws = join(root, "ws");
  // Outside the home folder too: what the sandbox hides in the home folder only a person grants.
  const outside = await Deno.realPath(
    await Deno.makeTempDir({ dir: "/var/tmp", prefix: "gate-outside-" }),
  );
  await Deno.mkdir(ws);
  await Deno.writeTextFile(join(outside, "secret.txt"), "outside content\n");
  const ternHome = join(root, "tern-home");
  await Deno.mkdir(join(ternHome, "sessions"), { recursive: true });
  await Deno.writeTextFile(join(ternHome, "config.jsonc"), '{ "mode": "ask" }\n');
  await Deno.mkdir(join(root, ".ssh"));
  await Deno.writeTextFile(join(root, ".ssh", "id_ed25519"), "PRIVATE KEY\n");
  const runtime = await createSandbox({
    workspace: ws,
    profile: options.profile ?? ":workspace",
    noSandbox: false,
    ternHome,
    env: { PATH: "/usr/bin:/bin", HOME: root },
    home: root,
    handlerUrl: new URL("../../src/tools/worker_handler.ts", import.meta.url),
    runId: "test",
    bwrapPath: options.bwrapPath,
    ...(options.denoAudit ? { auditDir: await Deno.makeTempDir({ dir: root }) } : {}),
  });
  const audit: AuditRecord[] = [];
  const events: AgentEvent[] = [];
  const asked: string[] = [];
  const requests: ReviewRequest[] = [];
  const reviewed: string[] = [];
  const answers = [...(options.answers ?? [])];
  const person: AskPerson | undefined = options.answers === undefined ? undefined : (request) => {
    asked.push(request.summary);
    requests.push(request);
    return Promise.resolve(answers.shift() ?? "deny");
  };
  const hooks = options.hooks === undefined ? undefined : new HookRunner({
    hooks: options.hooks,
    shell: () => ({ run: runtime.shell, confined: runtime.shellKind === "bwrap" }),
    workspace: ws,
    sessionId: "test",
    transcriptPath: join(ternHome, "sessions", "test.jsonl"),
    audit: (record) => audit.push(record),
    profile: runtime.profile.name,
    mode: options.mode ?? "ask",
  });
  const gate = new PermissionGate({
    ...(hooks === undefined ? {} : { hooks }),
    runtime,
    rules: await compileRules(options.rules ?? []),
    mode: options.mode ?? "ask",
    person,
    reviewer: options.reviewer === undefined ? undefined : (request, signal) => {
      reviewed.push(request.summary);
      return options.reviewer!(request, signal);
    },
    reviewTimeoutMs: 1000,
    ...(options.autoNetwork === undefined ? {} : { autoNetwork: options.autoNetwork }),
    ...(options.autoAskRules === undefined ? {} : { autoAskRules: options.autoAskRules }),
    masker: new SecretMasker([SECRET]),
    emit: (event) => events.push(event),
    audit: (record) => audit.push(record),
    onPermissionChange: (change) => options.changes?.push(change),
  });
  if (options.restore) await gate.restore(options.restore);
  const tools = new Map<string, Tool>(
    [
      ...builtinTools(builtinLoader(options.builtins)).map((tool) => gate.wrap(tool)),
      createRequestPermissionsTool(gate),
    ]
      .map((tool) => [tool.name, tool]),
  );
  const box: Box = {
    root,
    ws,
    outside,
    ternHome,
    reviewed,
    runtime,
    gate,
    tools,
    audit,
    events,
    asked,
    requests,
    call: (name, args) =>
      tools.get(name)!.run(args, {
        workspace: ws,
        signal: new AbortController().signal,
        callId: `c${audit.length}`,
      }),
  };
  try {
    await fn(box);
  } finally {
    await runtime.close();
    await Deno.remove(root, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
}

export function readRoots(box: Box): readonly string[] {
  const read = box.runtime.profile.grants.read;
  return read === "all" ? [] : read;
}

export function expectError(obs: Observation, code: string, pattern: RegExp) {
  equal(obs.status, "ERROR", JSON.stringify(obs));
  if (obs.status !== "ERROR") return;
  equal(obs.code, code);
  match(obs.message, pattern);
}
