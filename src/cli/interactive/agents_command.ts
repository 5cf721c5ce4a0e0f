/** `/agents`: the session's subagents and where each stands. */
import type { SubagentHost } from "../../harness/subagents/host.ts";
import type { SlashCommand } from "./commands.ts";

/** The `/agents` command over the session's subagents (none before the models connect). */
export function agentsCommand(host: () => SubagentHost | undefined): SlashCommand {
  return {
    name: "agents",
    description: "the subagents of this session (spawn_agent) and their state",
    whileRunning: true,
    run(context) {
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
