/**
 * The parent's settings a child inherits, in a module of their own: the host, the allowance a
 * child holds and the delegation question all read them.
 */

/** The parent's settings a child inherits. */
export interface ParentSettings {
  workspace: string;
  ternHome: string;
  model: string;
  provider?: string;
  thinking: "off" | "low" | "medium" | "high";
  baseUrl?: string;
  profile: string;
  noSandbox: boolean;
  mode: "ask" | "auto" | "bypass";
  /** In AUTO, who may widen the sandbox (`autoNetwork`): a child's reviewer no more. */
  autoNetwork: "reviewer" | "person" | "never";
  /** In AUTO, who answers the person's "ask" rules (`autoAskRules`): a child's reviewer no more. */
  autoAskRules: "reviewer" | "person";
  maxRounds: number;
  /** Children running at once. */
  maxSubagents: number;
  /** Longest a child may run, in milliseconds. */
  subagentTimeoutMs: number;
  /** Longest a child waits for the answer to an escalated call, in milliseconds. */
  subagentEscalationTimeoutMs: number;
  /** Keep one idle child started ahead, for the next spawn (`subagentPrestart`). */
  prestart: boolean;
  /** The person's `reviewModel`, which a child's reviewer uses too; absent: the child's model. */
  reviewModel?: string;
  /** A project's files chose the model server: a child's reviewer refuses every call. */
  serverChosen?: true;
}
