/**
 * The person's rules for the tools the subagent host adds (spawn_agent, wait_agent). These run
 * in tern's process, not through the sandbox's gate (a child's start would wait for the sandbox
 * to open), so the rules that name them are applied here as the gate's policy would apply them:
 * a deny rule refuses the call, an ask rule asks the person (denied when there is none; allowed
 * unasked under BYPASS, as the gate allows every call an ask rule matches). A rule with a command
 * or a path never matches them: their calls run no command and name no path. Each call is
 * written to the audit log as the gate writes its own (`audit`): who decided, and how it ended.
 */
import type { Observation } from "../../core/observation.ts";
import type { AuditRecord } from "../../sandbox/audit.ts";
import type { AskPerson, ReviewRequest } from "../../sandbox/review.ts";
import type { CompiledRule } from "../../sandbox/rules.ts";
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
      const decision = await decide(tool.name, args, ctx.signal, options);
      let observation = decision.refusal;
      try {
        observation ??= await tool.run(args, ctx);
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
    const reason = deny.reason ?? `A rule forbids this (${deny.label})`;
    return { refusal: denied(reason), decidedBy: "rule", rule: deny.label, reason };
  }
  const ask = rules.find((rule) => rule.action === "ask");
  if (ask === undefined) {
    return { decidedBy: "policy", reason: `"${name}" runs in tern's process; no rule names it` };
  }
  if (options.mode() === "bypass") return { decidedBy: "bypass", rule: ask.label };
  const person = options.person;
  if (person === undefined) {
    const reason =
      `Not approved: the rule ${ask.label} asks a person about "${name}", and nobody can be asked`;
    return { refusal: denied(reason), decidedBy: "rule", rule: ask.label, reason };
  }
  const shownArgs = maskStrings(args, options.mask);
  const quoted = JSON.stringify(shownArgs) ?? "";
  const request: ReviewRequest = {
    tool: name,
    args: shownArgs,
    summary: `${name} ${
      quoted.length > SUMMARY_CHARS ? `${quoted.slice(0, SUMMARY_CHARS)}…` : quoted
    }`,
    reason: `"${name}" runs in tern's process`,
    note: {
      from: `the ask rule ${ask.label} in ${ask.from ?? "your config"}`,
      text: ask.reason ?? "",
    },
    profile: options.profile(),
    rememberable: false,
  };
  const reply = await person(request, signal).catch(() => "deny" as const);
  const byPerson = { decidedBy: "person" as const, rule: ask.label };
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
