/**
 * The shape of a scenario of the scenario benchmark (bench/scenarios/*.json): a workspace
 * fixture, the scripted model's turns, the real `tern` command lines to run against it, and what
 * must come of them. Strings in args, env and files may name `{dir}` (the workspace), `{home}`
 * (TERN_HOME), `{baseUrl}` (the scripted model server), `{webUrl}` (a local web server), `{modelPort}`,
 * `{root}` (the checkout), `{deno}` (this Deno), `{realHome}` and `{denoDir}` (the person's HOME
 * and Deno's cache, for MCP servers run by Deno), `{mcpEverything}` and `{mcpFilesystem}` (the
 * reference servers' npm specifiers) and any value a step captured.
 */
import type { ScriptedReply } from "../src/llm/scripted.ts";

/** One model turn: a scripted reply, chosen for the first request it matches. */
export interface Turn extends ScriptedReply {
  /** A text every message of the request, joined, must contain (system prompt included). */
  when?: string;
  /** A text the request's last message must contain. */
  whenLast?: string;
  /** How many requests this turn answers (default 1; 0: any number). */
  times?: number;
}

/** Text checks: each pattern (a regular expression) must match; `!pattern` must not. */
export type Patterns = string[];

/** One run of `tern`. */
export interface Step {
  /** tern's arguments (after `tern`). */
  args: string[];
  /** Text on stdin (else none). */
  stdin?: string;
  /** More environment for this run. */
  env?: Record<string, string>;
  /**
   * Sends a signal once the server has received this many requests and this workspace file
   * exists (a command the run started made it).
   */
  signal?: { name: "SIGINT" | "SIGTERM" | "SIGKILL"; afterRequests?: number; afterFile?: string };
  /** Expected exit code (default 0). */
  code?: number;
  stdout?: Patterns;
  stderr?: Patterns;
  /** Fields the JSON on stdout must have (compared as JSON), by dotted path. */
  json?: Record<string, unknown>;
  /**
   * Values to keep for later steps, by name: a dotted path into the JSON on stdout, or
   * `/regex/` on stdout (its first group).
   */
  capture?: Record<string, string>;
}

/** What must be true after the last step. */
export interface Expect {
  /** Workspace files: exact text, or null when the file must not exist. */
  files?: Record<string, string | null>;
  /** Files anywhere (absolute paths, `{home}` and the like put in): exact text, or null. */
  outside?: Record<string, string | null>;
  /** Workspace files whose text must match these patterns. */
  fileMatches?: Record<string, Patterns>;
  /** How many model requests the server received. */
  requests?: number;
  /** Patterns on every request's messages (all requests, as text). */
  sent?: Patterns;
  /** Patterns on the request bodies exactly as sent (JSON text, all requests). */
  wire?: Patterns;
  /** Request paths in order (e.g. `/v1/messages`). */
  paths?: string[];
  /** Patterns on all session files' text (JSON lines). */
  session?: Patterns;
  /** How many session files TERN_HOME/sessions holds (subagents' included). */
  sessions?: number;
  /** Patterns on all audit logs' text. */
  audit?: Patterns;
  /**
   * Text no live process's command line may hold once the steps ended (a command tern was
   * told to stop must be gone, not merely silent); checked for up to two seconds.
   */
  noProcesses?: string[];
}

export interface Scenario {
  name: string;
  /** The part of tern it proves (the report groups by it). */
  area: string;
  /** What it needs from the machine: skipped (and reported) without it. */
  needs?: Array<"bwrap" | "rg" | "mcp">;
  /** Workspace files (path → text). */
  files?: Record<string, string>;
  /** Workspace files copied from the checkout (workspace path → checkout path). */
  copy?: Record<string, string>;
  /** Files in TERN_HOME (config.jsonc, mcp.json…). */
  homeFiles?: Record<string, string>;
  /** Environment for every step. */
  env?: Record<string, string>;
  /** The model's turns (none: the server answers every request with an error). */
  turns?: Turn[];
  /** Serve a second scripted server at `{baseUrl2}` with these turns (fallback scenarios). */
  turns2?: Turn[];
  /** Serve pages at `{webUrl}`: path → HTML text. */
  web?: Record<string, string>;
  steps: Step[];
  expect?: Expect;
}

/** The outcome of one scenario. */
export interface ScenarioResult {
  name: string;
  area: string;
  file: string;
  status: "pass" | "fail" | "skip";
  ms: number;
  steps: number;
  requests: number;
  /** Why it failed or was skipped. */
  detail?: string;
}
