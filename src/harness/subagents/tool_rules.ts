/**
 * The person's rules for the tools the subagent host adds (spawn_agent, wait_agent). These run
 * in tern's process, not through the sandbox's gate (a child's start would wait for the sandbox
 * to open), so the rules that name them are applied here as the gate's policy would apply them:
 * a deny rule refuses the call, an ask rule asks the person (denied when there is none; allowed
 * unasked under BYPASS, as the gate allows every call an ask rule matches). A rule with a command
 * or a path never matches them: their calls run no command and name no path. Each call is
 * written to the audit log as the gate writes its own (`audit`): who decided, and how it ended.
 *
 * The person's PreToolUse and PostToolUse hooks see these calls as the gate's (`hooks`: the
 * gate's own code): a block refuses, an ask asks the person as an ask rule does (denied under
 * BYPASS, as the gate denies a hook's question there), a rewritten input is validated again by
 * the tool and judged by the rules and the host, `continue: false` ends the turn.
 */
import type { ToolHookCalls } from "../../agent/tool_hooks.ts";
import type { Observation } from "../../core/observation.ts";
import type { HookOutcome } from "../../sandbox/hooks/run.ts";
import type { AuditRecord } from "../../sandbox/audit.ts";
import type { AskPerson, ReviewRequest } from "../../sandbox/review.ts";
import type { CompiledRule } from "../../sandbox/rules.ts";
import { denialReason } from "../../sandbox/denial_reason.ts";
import type { Tool } from "../../tools/define.ts";

/** What applying the rules needs, read at each call (the mode and profile may change). */
export interface ToolRulesOptions {
  rules: readonly CompiledRule[];
  mode: () => "ask" | "auto" | "bypass";
  profile: () => string;
  /** The person; absent when nobody can be asked (an ask rule then denies). */
  person?: AskPerson;
  /** Masks the keys tern knows of in what the model wrote, before the person is shown it. */
  mask: (text: string) => string;
  /** The session id audit records carry. */
  session: () => string;
  /** Writes one record to the session's audit log. */
  audit: (record: AuditRecord) => void;
  /**
   * The gate whose hooks of `event` match a call of `name`; undefined when none does, found
   * without opening the sandbox (a call no hook listens to never waits for it).
   */
  hooks?: (
    event: "PreToolUse" | "PostToolUse",
    name: string,
  ) => Promise<ToolHookCalls | undefined>;
}

/** Who decided a call, and why, as the audit log says it. */
interface Decision {
  refusal?: Observation;
  decidedBy: AuditRecord["decidedBy"];
  rule?: string;
  reason?: string;
}

/** The longest stretch of a call's arguments the question's summary quotes, in characters. */
const SUMMARY_CHARS = 200;

/** `tools`, each refusing or asking before it runs as the rules naming it say. */
export function ruledTools(tools: readonly Tool[], options: ToolRulesOptions): Tool[] {
  return tools.map((tool) => ({
    ...tool,
    run: async (args, ctx) => {
      const started = performance.now();
      const hooked = await options.hooks?.("PreToolUse", tool.name);
      const pre = await hooked?.preToolUse(tool.name, args, ctx);
      // A rewritten input is judged (and validated by the tool) as the model's would be.
      if (pre?.updatedInput !== undefined) args = pre.updatedInput;
      const decision = await decide(tool.name, args, ctx.signal, options, pre);
      let observation = decision.refusal;
      try {
        observation ??= await tool.run(args, ctx);
        const ran = decision.refusal === undefined;
        const after = hooked ?? (ran ? await options.hooks?.("PostToolUse", tool.name) : undefined);
        observation = await after?.postToolUse(tool.name, args, observation, ctx, {
          ...(pre === undefined ? {} : { pre }),
          ran,
        }) ?? observation;
        return observation;
      } finally {
        options.audit({
          v: 1,
          time: new Date().toISOString(),
          session: options.session(),
          callId: ctx.callId ?? "",
          tool: tool.name,
          args: maskStrings(args, options.mask),
          profile: options.profile(),
          mode: options.mode(),
          decision: decision.refusal === undefined ? "allow" : "deny",
          decidedBy: decision.decidedBy,
          ...(decision.rule === undefined ? {} : { rule: decision.rule }),
          ...(decision.reason === undefined ? {} : { reason: decision.reason }),
          sandbox: "in-process",
          status: observation?.status === "SUCCEEDED" ? "SUCCEEDED" : "ERROR",
          ...(observation?.status === "ERROR" ? { code: observation.code } : {}),
          durationMs: Math.round(performance.now() - started),
        });
      }
    },
  }));
}

/** Whether the rules let this call run, who decided, and the refusal when they do not. */
async function decide(
  name: string,
  args: unknown,
  signal: AbortSignal,
  options: ToolRulesOptions,
  hook?: Pick<HookOutcome, "block" | "ask">,
): Promise<Decision> {
  // As `ruleApplies()` reads a call that names no path and runs no command (not imported: the
  // rules' module loads at the first gated call, not with the session). Allow rules are not
  // read: they would skip no question the host asks itself.
  const rules = options.rules.filter((rule) =>
    rule.action !== "allow" && rule.path === undefined && rule.words === undefined &&
    rule.matchesTool(name)
  );
  const deny = rules.find((rule) => rule.action === "deny");
  if (deny !== undefined) {
    const reason = denialReason(deny);
    return { refusal: denied(reason), decidedBy: "rule", rule: deny.label, reason };
  }
  // A hook only tightens, as at the gate: its block refuses, its ask needs a person.
  if (hook?.block !== undefined) {
    const reason = `A PreToolUse hook blocked this: ${hook.block}`;
    return { refusal: denied(reason), decidedBy: "hook", reason };
  }
  if (hook?.ask !== undefined) {
    if (options.mode() === "bypass" || options.person === undefined) {
      const reason = `Not approved: a PreToolUse hook asks a person about "${name}", and ` +
        "nobody can be asked (the reviewer may not allow it)";
      return { refusal: denied(reason), decidedBy: "hook", reason };
    }
    return await askPerson(name, args, signal, options, {
      from: "a PreToolUse hook",
      text: hook.ask,
    });
  }
  const ask = rules.find((rule) => rule.action === "ask");
  if (ask === undefined) {
    return { decidedBy: "policy", reason: `"${name}" runs in tern's process; no rule names it` };
  }
  if (options.mode() === "bypass") return { decidedBy: "bypass", rule: ask.label };
  if (options.person === undefined) {
    const reason =
      `Not approved: the rule ${ask.label} asks a person about "${name}", and nobody can be asked`;
    return { refusal: denied(reason), decidedBy: "rule", rule: ask.label, reason };
  }
  const asked = await askPerson(name, args, signal, options, {
    from: `the ask rule ${ask.label} in ${ask.from ?? "your config"}`,
    text: ask.reason ?? "",
  });
  return { ...asked, rule: ask.label };
}

/** Asks the person about a call (`options.person` is there), with `note` saying who asks. */
async function askPerson(
  name: string,
  args: unknown,
  signal: AbortSignal,
  options: ToolRulesOptions,
  note: { from: string; text: string },
): Promise<Decision> {
  const person = options.person!;
  const shownArgs = maskStrings(args, options.mask);
  const quoted = JSON.stringify(shownArgs) ?? "";
  const request: ReviewRequest = {
    tool: name,
    args: shownArgs,
    summary: `${name} ${
      quoted.length > SUMMARY_CHARS ? `${quoted.slice(0, SUMMARY_CHARS)}…` : quoted
    }`,
    reason: `"${name}" runs in tern's process`,
    ...(quoted === JSON.stringify(args) ? {} : { hiddenKeys: true as const }),
    note,
    profile: options.profile(),
    rememberable: false,
  };
  const reply = await person(request, signal).catch(() => "deny" as const);
  const byPerson = { decidedBy: "person" as const };
  if (typeof reply === "object") {
    const said = reply.deny.trim();
    const reason = said === "" ? "The user denied it" : `The user denied it, saying: ${said}`;
    return { ...byPerson, refusal: denied(reason), reason };
  }
  if (reply === "deny") return { ...byPerson, refusal: denied("The user denied it") };
  return byPerson;
}

function denied(message: string): Observation {
  return { status: "ERROR", code: "POLICY_DENIED", message };
}

/** `value` with every string in it masked (keys and array items alike). */
function maskStrings(value: unknown, mask: (text: string) => string): unknown {
  if (typeof value === "string") return mask(value);
  if (Array.isArray(value)) return value.map((item) => maskStrings(item, mask));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [mask(key), maskStrings(item, mask)]),
    );
  }
  return value;
}
