/**
 * `/rewind [entry|undo]`: pick an earlier request, choose what goes back (files, conversation or
 * both), see the diff, and only then apply it; files changed outside tern since are the person's
 * to keep or overwrite. The work is `src/harness/rewind/rewind.ts`, shared with
 * `tern sessions rewind` and the RPC command.
 */
import { plural } from "../../tui/format.ts";
import { shellJoin } from "../../core/shell_join.ts";
import { terminalText } from "../../core/terminal_text.ts";
import {
  applyRewind,
  planRewind,
  type RewindScope,
  userTurns,
} from "../../harness/rewind/rewind.ts";
import { selectDialog } from "../../tui/select_dialog.ts";
import { describeInterrupted, interruptedRewind } from "../../harness/rewind/interrupted.ts";
import { readRecords } from "../../harness/rewind/records.ts";
import { describePlan } from "../sessions_rewind.ts";
import type { CommandContext, SlashCommand } from "./commands.ts";

/** Lines of diff shown in the transcript before asking; the rest is summed up. */
const MAX_DIFF_LINES = 200;

/** The `/rewind` command. */
export function rewindCommand(): SlashCommand {
  return {
    name: "rewind",
    description: "go back to before an earlier request: files, conversation or both (undo: back)",
    usage: "[entry|undo]",
    run: async (context, args) => {
      if (!context.canAsk) {
        const session = context.session.id.slice(0, 8);
        // Quoted as a shell reads it: the words go into a command the person may paste.
        const target = args === "" ? "<entry|undo>" : shellJoin([args]);
        throw new Error(
          "/rewind needs a terminal to choose what goes back and to confirm it: in line mode, " +
            `once this session has ended, \`tern sessions rewind ${session} ${target} --yes\` ` +
            "does it",
        );
      }
      // The session was opened with its files half restored: say so again, in /rewind's terms.
      const interrupted = interruptedRewind(await readRecords(context.session.path));
      if (interrupted !== undefined) {
        context.notice(
          terminalText(describeInterrupted(interrupted, (target) => `/rewind ${target}`)),
          "warning",
        );
      }
      const target = args === "" ? await pickTurn(context) : args;
      if (target === undefined) return;
      // A target that names no request (or an undo with nothing to undo) is refused before the
      // person is asked anything: the conversation-only plan checks it without reading files.
      await planRewind(context.session, target, { ...planOptions(context), scope: "conversation" });
      const scope = await context.pick(selectDialog<RewindScope>({
        theme: context.theme,
        title: target === "undo" ? "Undo the last rewind of" : "Rewind",
        items: [
          { label: "files and conversation", value: "both" },
          { label: "conversation only", value: "conversation" },
          { label: "files only", value: "files" },
        ],
      }));
      if (scope === undefined) return;
      // The checkpoint after the last turn is written behind it: wait for it.
      await context.conversation().then((c) => c.checkpointsIdle(), () => {});
      const options = { ...planOptions(context), scope };
      const plan = await planRewind(context.session, target, options);
      // The files' old text may hold a key tern holds now: masked, as `tern sessions rewind` is.
      const lines = terminalText(context.mask(describePlan(plan))).split("\n");
      const shown = lines.slice(0, MAX_DIFF_LINES);
      if (lines.length > shown.length) {
        shown.push(
          `… ${plural(lines.length - shown.length, "more line")} (tern sessions rewind shows all)`,
        );
      }
      context.print(shown.map((line) => `  ${line}`));
      if (plan.changes.length === 0 && plan.leaf === undefined) {
        context.notice("nothing to rewind");
        return;
      }
      const conflicts = plan.conflicts.length;
      const choice = await context.pick(selectDialog<"apply" | "keep" | "overwrite">({
        theme: context.theme,
        title: conflicts > 0
          ? `${conflicts} file(s) changed outside tern since then`
          : "Apply this rewind?",
        items: conflicts > 0
          ? [
            { label: "keep those files as they are, restore the rest", value: "keep" },
            { label: "overwrite them too", value: "overwrite" },
          ]
          : [{ label: "apply", value: "apply" }],
      }));
      if (choice === undefined) {
        context.notice("rewind cancelled: nothing changed");
        return;
      }
      const result = await applyRewind(context.session, plan, {
        ...options,
        overwrite: choice === "overwrite",
      });
      if (result.leaf !== undefined) await context.switchSession(context.session, { replay: true });
      context.notice(
        `rewound: ${result.written.length} file(s) written, ${result.deleted.length} removed` +
          (result.kept.length > 0 ? `, ${result.kept.length} kept` : "") +
          " (/rewind undo goes back)",
      );
    },
  };
}

async function pickTurn(context: CommandContext): Promise<string | undefined> {
  const turns = userTurns(context.session).reverse();
  if (turns.length === 0) {
    context.notice("no request to rewind to yet");
    return undefined;
  }
  return await context.pick(selectDialog({
    theme: context.theme,
    title: "Rewind to before",
    items: [
      ...turns.map((turn) => ({
        // Masked before the cut: a key cut in two would no longer match.
        label: terminalText(context.mask(turn.text.slice(0, 2_000)).slice(0, 100)),
        detail: turn.entryId,
        value: turn.entryId,
      })),
      { label: "undo the last rewind", value: "undo" },
    ],
    filterable: true,
  }));
}

/** What planning and applying a rewind take from the session's settings, but the scope. */
function planOptions(context: CommandContext) {
  return {
    workspace: context.workspace,
    maxFileBytes: context.config.rewindMaxFileBytes || undefined,
    maxFiles: context.config.rewindMaxFiles,
    rules: context.config.rules,
  };
}
