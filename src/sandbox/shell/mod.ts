/**
 * Shell command analysis: {@link analyzeShell} splits a command line into the simple commands it
 * runs; {@link classifyShell} labels it (read-only, writes-files, network, ...) with reasons.
 */
export { analyzeShell, commandName } from "./parse.ts";
export type { Redirect, ShellAnalysis, SimpleCommand } from "./parse.ts";
export { classifyCommand, classifyShell } from "./classify.ts";
export type { CommandRisk, RiskLabel, ShellRisk } from "./classify.ts";
