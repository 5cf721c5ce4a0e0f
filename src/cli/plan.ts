/**
 * `tern plan "task"` (also `--plan`): plan the task as a graph, run it, show the graph live and
 * a summary; `tern plan --resume [session]` continues an interrupted plan, `--append` adds
 * nodes to it first.
 */
import { InputError } from "./errors.ts";
import { planExitCode } from "./exit_codes.ts";
import { listenForInterrupts } from "./interrupts.ts";
import { jsonForTerminal, terminalText } from "../core/terminal_text.ts";
import { warningLine } from "../core/warnings.ts";
import type { AgentEvent, HostFileNotes } from "../core/events.ts";
import { hostFileLines } from "../sandbox/persistence.ts";
import { PlanningError, PlanValidationError } from "../plan/errors.ts";
import { runOf } from "../plan/runs.ts";
import type { PlanNode } from "../plan/types.ts";
import type { CommandLine } from "./args.ts";
import { oneAtATime, terminalPerson } from "./ask_person.ts";
import { type AgentSession, openAgentSession } from "../harness/agent_session.ts";
import { themeFor } from "../tui/theme.ts";
import { truncateToWidth } from "../tui/width.ts";
import { runPlan } from "../harness/plan_run.ts";
import { planJson, planLines, planSummary } from "./plan_view.ts";
import { colorWanted, processWriters, resolveWorkspace } from "./process_env.ts";
import type { RunFlags } from "./run.ts";

type PlanLine = Extract<CommandLine, { command: "plan" }>;

/** Runs `tern plan` and returns the exit code. */
export async function runPlanCommand(line: PlanLine, flags: RunFlags): Promise<number> {
  const options = line.options;
  const resume = options.resume !== undefined || options.continue === true;
  if (!resume && line.task === undefined) {
    throw usage('Nothing to plan: tern plan "task", or tern plan --resume to continue one');
  }
  if (resume && line.task !== undefined) {
    throw usage("--resume continues the session's plan: give no task (or drop --resume)");
  }
  if (line.append !== undefined && !resume) {
    throw usage("--append adds nodes to a plan being continued: add --resume");
  }
  const append = line.append === undefined ? undefined : parseAppend(line.append);
  const choice = !resume ? {} : options.resume ? { resume: options.resume } : { continue: true };
  // Listening from the start: a signal while the session opens stops the plan before it
  // begins, and SIGTERM or SIGHUP cancel it the orderly way, as Ctrl-C does.
  using interrupts = listenForInterrupts();
  const writers = processWriters();
  // JSON output gets what JSON leaves raw escaped; text is cleaned where it is made.
  const write = { ...writers, out: (text: string) => writers.out(jsonForTerminal(text)) };
  const text = flags.output === "text";
  const stream = flags.output === "stream-json";
  const style = themeFor(colorWanted(Deno.stderr.isTerminal()));
  const live = text && Deno.stderr.isTerminal() ? liveBlock(write.err) : undefined;
  /** Lines for the person on stderr: above the live graph while it is drawn. */
  const tell = (lines: string[]) => {
    if (live) live.print(lines);
    else for (const line of lines) write.err(`${line}\n`);
  };
  /** Changes to files that run code on the host, for the JSON result. */
  const hostFiles: HostFileNotes = [];
  // The steps' own events come through runPlan; these are the conversation's (the sandbox's
  // and the gate's). Of them the person must see what background processes changed among
  // the files that run code on the host, as tern run shows it.
  const emit = (event: AgentEvent) => {
    if (event.type !== "background_host_files") return;
    hostFiles.push(...event.hostFiles);
    if (stream) write.out(JSON.stringify(event) + "\n");
    else if (text) {
      tell(hostFileLines(event.hostFiles, { by: "background" }).map((l) => style.yellow(l)));
    }
  };
  const agent: AgentSession = await openAgentSession({
    workspace: resolveWorkspace(flags.cwd),
    flags: flags.config,
    session: choice,
    emit,
    person: text
      ? oneAtATime(terminalPerson({
        workspace: resolveWorkspace(flags.cwd),
        // Asked only during a step, once the session is open.
        readRefusal: () => agent.conversation.readRefusal(),
      }))
      : undefined,
    warn: (text) => tell([`tern: warning: ${warningLine(text)}`]),
  });
  const { session, config, conversation } = agent;
  try {
    if (interrupts.signal.aborted) return interrupts.exitCode();
    const result = await runPlan({
      conversation,
      task: line.task,
      resume,
      append,
      concurrency: line.concurrency ?? config.planConcurrency,
      signal: interrupts.signal,
      onPlanned: (plan, attempts) => {
        if (stream) write.out(JSON.stringify({ type: "plan", attempts, plan }) + "\n");
        if (!text) return;
        const retried = attempts > 1 ? " (after one corrective retry)" : "";
        // A resumed plan's id is read from its session: shown as text, whatever it holds.
        const id = warningLine(plan.id);
        write.err(`tern: plan ${id} for session ${session.id.slice(0, 8)}${retried}\n`);
        if (live) live.draw(planLines(plan, style));
      },
      onUpdate: (plan, nodeId) => {
        if (stream) {
          const run = runOf(plan, nodeId);
          write.out(JSON.stringify({ type: "plan_node", planId: plan.id, nodeId, ...run }) + "\n");
        }
        if (!text) return;
        if (live) live.draw(planLines(plan, style));
        else {
          const state = runOf(plan, nodeId)?.state ?? "WAITING";
          write.err(`tern: ${warningLine(nodeId)} ${state}\n`);
        }
      },
      onNote: (note) => {
        if (stream) write.out(JSON.stringify({ type: "plan_note", text: note }) + "\n");
        else if (text) tell([`tern: ${warningLine(note)}`]);
      },
      onHostFiles: (nodeId, changed) => {
        hostFiles.push(...changed);
        if (stream) {
          write.out(JSON.stringify({ type: "plan_host_files", nodeId, hostFiles: changed }) + "\n");
        } else if (text) tell(hostFileLines(changed).map((line) => style.yellow(line)));
      },
    }).catch((error) => {
      // Appended nodes the graph refuses are bad input: nothing was recorded.
      if (error instanceof PlanValidationError && append) throw usage(error.message);
      throw error;
    }).catch((error) => {
      // Stopped while the model planned: told as any error is, with the signal's exit code.
      if (!(error instanceof PlanningError && error.cancelled)) throw error;
      write.err(`tern: ${terminalText(error.message)}\n`);
      return undefined;
    });
    if (result === undefined) return interrupts.exitCode();
    const { state: final, cancelled, replans, usage: tokens } = result;
    // The run ends here: what background processes changed after the last step is told
    // before the summary, not after it (or never).
    await conversation.stopBackground();
    if (!text) {
      // json: the one object; stream-json: the same, as the last line.
      write.out(
        planJson(final, {
          session: session.id,
          sessionPath: session.path,
          cancelled,
          replans,
          usage: tokens,
          exitCode: cancelled ? interrupts.exitCode() : planExitCode(final, cancelled),
          ...(hostFiles.length === 0 ? {} : { hostFiles }),
        }) + "\n",
      );
    } else {
      write.out(planSummary(final, style, cancelled).join("\n") + "\n");
      write.err(`tern: session ${session.id.slice(0, 8)} (continue the plan with tern plan -c)\n`);
    }
    return cancelled ? interrupts.exitCode() : planExitCode(final, cancelled);
  } finally {
    // A signal during the close cuts its SessionEnd hooks short; after one that stopped the
    // turn, they run (bounded), and a second exits at once.
    await agent.close(interrupts.signal.aborted ? undefined : interrupts.signal);
  }
}

/** `--append`'s JSON: `{"nodes":[…]}` or the array alone; the graph checks the nodes. */
function parseAppend(text: string): PlanNode[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw usage(`Invalid --append: not JSON (${(error as Error).message})`);
  }
  const nodes = Array.isArray(value) ? value : (value as { nodes?: unknown } | null)?.nodes;
  if (!Array.isArray(nodes)) {
    throw usage('Invalid --append: expected {"nodes":[{"id","title","task","dependsOn"}]}');
  }
  // Nothing to add would continue the plan as a plain --resume does: not what was asked.
  if (nodes.length === 0) {
    throw usage("Invalid --append: no nodes to add (to continue the plan as it is, drop --append)");
  }
  return nodes as PlanNode[];
}

/**
 * Redraws a block of lines in place on a terminal (the graph while it runs); `print` writes
 * lines above it, which stay. Each line of the block is cut to the terminal's width
 * (`columns`, by default the console's, 80 when it has none), so moving up over the rows it
 * drew moves over all of them: a line that wrapped would leave a stale row behind. A block
 * taller than the terminal (`rows`, by default the console's, 24 when it has none) shows its
 * first lines and how many more there are: the cursor cannot move up past the screen's top, so
 * each redraw of a taller one would leave a stale copy of the graph in the scrollback.
 */
export function liveBlock(
  err: (text: string) => void,
  options: { columns?: () => number; rows?: () => number } = {},
): { draw(lines: string[]): void; print(lines: string[]): void } {
  const columns = options.columns ?? consoleColumns;
  const screenRows = options.rows ?? consoleRows;
  let block: string[] = [];
  let height = 0;
  const render = (above: string[]) => {
    const width = Math.max(1, columns());
    const up = height > 0 ? `\r\x1b[${height}A` : "";
    const fits = Math.max(2, screenRows() - 1);
    const shown = block.length <= fits
      ? block
      : [...block.slice(0, fits - 1), `… ${block.length - fits + 1} more (all in the summary)`];
    const rows = above.map((line) => `\x1b[2K${line}\n`).join("") +
      shown.map((line) => `\x1b[2K${truncateToWidth(line, width)}\n`).join("");
    // What is left below (the block was higher, a line above wrapped) is cleared.
    err(`${up}${rows}\x1b[J`);
    height = shown.length;
  };
  return {
    draw(lines) {
      block = lines;
      render([]);
    },
    print(lines) {
      render(lines);
    },
  };
}

function consoleRows(): number {
  try {
    return Deno.consoleSize().rows || 24;
  } catch {
    return 24;
  }
}

function consoleColumns(): number {
  try {
    return Deno.consoleSize().columns || 80;
  } catch {
    return 80;
  }
}

function usage(message: string): InputError {
  return new InputError(message);
}
