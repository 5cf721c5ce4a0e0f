/** `/agents`: the session's subagents and where each stands; `/agents stop` ends running ones. */
import type { SubagentHost } from "../../harness/subagents/host.ts";
import type { SlashCommand } from "./commands.ts";

/** The `/agents` command over the session's subagents (none before the models connect). */
export function agentsCommand(host: () => SubagentHost | undefined): SlashCommand {
  return {
    name: "agents",
    description: "the subagents of this session (spawn_agent) and their state; stop one or all",
    usage: "[stop <agent id|run id|all>]",
    whileRunning: true,
    run(context, args) {
      const words = args.trim().split(/\s+/).filter((word) => word !== "");
      if (words[0] === "stop") {
        const which = words[1];
        if (which === undefined || words.length > 2) {
          context.notice("Usage: /agents stop <agent id|run id|all>", "error");
          return;
        }
        const stopped = host()?.stop(which, "the person asked (/agents stop)") ?? [];
        context.notice(
          stopped.length === 0
            ? which === "all"
              ? "No subagent is running"
              : `No running subagent "${which}" (see /agents)`
            : `Stopping ${
              stopped.map((spawn) => `${spawn.taskName} (${spawn.agentId})`).join(", ")
            }`,
        );
        return;
      }
      if (words.length > 0) {
        context.notice(
          `Unknown /agents argument "${words[0]}": try /agents stop <id|all>`,
          "error",
        );
        return;
      }
      const states = host()?.states() ?? [];
      if (states.length === 0) {
        context.notice("No subagents in this session");
        return;
      }
      context.print(
        states.map(({ spawn, state }) =>
          `${spawn.taskName}  ${spawn.agentId}  ${spawn.runId}  ${state}  ` +
          `(session ${spawn.childSessionId.slice(0, 8)})`
        ),
      );
    },
  };
}
