/** Slash commands about sessions: /new, /resume, /tree, /fork, /sessions, /compact. */
import { selectDialog } from "../../tui/select_dialog.ts";
import {
  CompactionCancelledError,
  compactionSettings,
  compactSession,
} from "../../agent/session_turn.ts";
import { previewCompaction, previewLines } from "../../context/compaction_preview.ts";
import { notThePerson } from "../../agent/session_turn.ts";
import { userVoice } from "../../session/voice.ts";
import { moveLeaf } from "../../session/branch.ts";
import { forkSession } from "../../session/fork.ts";
import { findSession, listSessions, type SessionInfo } from "../../session/paths.ts";
import { Session } from "../../session/session.ts";
import { SessionTree } from "../../session/tree.ts";
import { type SessionEntry, summarisedCount } from "../../session/types.ts";
import { openSessionHere, serverChooser } from "../../harness/run_session.ts";
import { VERSION } from "../../version.ts";
import { describeEntry, shownId } from "../session_text.ts";
import type { CommandContext, SlashCommand } from "./commands.ts";

export function sessionCommands(): SlashCommand[] {
  return [
    {
      name: "redraw",
      description: "clear the screen and show this session's transcript again (also Ctrl-L)",
      run: (context) => context.redraw(),
    },
    {
      name: "new",
      description: "start a new session in this directory",
      run: async (context) => {
        const chooser = serverChooser(context.config.serverChosenBy);
        const session = Session.create(context.config.ternHome, {
          cwd: context.workspace,
          ternVersion: VERSION,
          ...(chooser === undefined ? {} : { serverChosenBy: chooser }),
        });
        await context.switchSession(session);
        context.notice(`new session ${session.id.slice(0, 8)}`);
      },
    },
    {
      name: "resume",
      description: "continue another session of this directory (a picker without an id)",
      usage: "[id]",
      run: async (context, args) => {
        if (args === "" && !context.canAsk) {
          throw new Error(
            "/resume needs a session id in line mode: /resume <id> (/sessions lists them)",
          );
        }
        const path = args === "" ? await pickSession(context) : await findOne(context, args);
        if (path === undefined) return;
        if (path === context.session.path) {
          context.notice("that is the current session");
          return;
        }
        // Another directory's session is refused, as `tern run --resume` refuses it.
        const session = await openSessionHere(path, context.workspace, context.config.ternHome);
        await context.switchSession(session, { replay: true });
        context.notice(`resumed session ${session.id.slice(0, 8)}`);
      },
    },
    {
      name: "tree",
      description: "continue from any entry of this session (a new branch)",
      run: async (context) => {
        if (!context.canAsk) {
          throw new Error(
            "/tree needs a terminal to choose the entry: in line mode, start again with " +
              "`tern -c --from <entry>` (`tern sessions tree -c` lists the entries)",
          );
        }
        const { session } = context;
        const rows = treeRows(session.entries);
        if (rows.length === 0) {
          context.notice("the session has no entries yet");
          return;
        }
        const leaf = session.leafId;
        const picked = await context.pick(selectDialog({
          theme: context.theme,
          title: "Continue from",
          items: rows.map((row) => ({
            label: `${"  ".repeat(row.depth)}${row.entry.id === leaf ? "● " : ""}${
              context.mask(describeEntry(row.entry))
            }`,
            detail: shownId(row.entry.id),
            value: row.entry.id,
          })),
          filterable: true,
          initial: Math.max(0, rows.findIndex((row) => row.entry.id === leaf)),
        }));
        if (picked === undefined || picked === leaf) return;
        moveLeaf(session, picked);
        await context.switchSession(session, { replay: true });
        context.notice(
          `continuing from ${shownId(picked)}: ${
            context.mask(describeEntry(session.get(picked)!))
          }`,
        );
      },
    },
    {
      name: "fork",
      description: "copy this session's current path into a new session and continue there",
      run: async (context) => {
        const fork = await forkSession(context.config.ternHome, context.session.path, {
          ternVersion: VERSION,
        });
        await context.switchSession(fork);
        context.notice(`forked into session ${fork.id.slice(0, 8)}`);
      },
    },
    {
      name: "sessions",
      description: "sessions of this directory, newest first",
      whileRunning: true,
      run: async (context) => {
        const sessions = await listSessions(context.config.ternHome, { cwd: context.workspace });
        if (sessions.length === 0) {
          context.notice("no sessions yet");
          return;
        }
        context.print(sessions.slice(0, 20).map((info) => sessionLabel(info, context)));
      },
    },
    {
      name: "compact",
      description: "summarise the older part of the conversation now",
      usage: "[focus]",
      run: async (context, args, signal) => {
        const conversation = await context.conversation();
        const { config } = conversation;
        const settings = compactionSettings(config.contextWindow, config.compactAt);
        // The same cut compactSession() makes: the person sees it before anything changes.
        const preview = previewCompaction(context.session.state().items, settings, {
          voiceOf: (content) => notThePerson(userVoice(content)),
        });
        if (preview.cut === 0) {
          context.notice("nothing to compact: the whole conversation is recent enough to keep");
          return;
        }
        context.print(["compaction preview:", ...previewLines(preview)]);
        if (context.canAsk && !await confirmCompaction(context)) {
          context.notice("not compacted: the conversation is unchanged");
          return;
        }
        const entry = await compactSession(context.session, {
          provider: conversation.provider,
          model: config.model,
          settings,
          focus: args || undefined,
          // Esc stops a PreCompact hook and the summary alike.
          signal,
          beforeCompact: (signal) => conversation.preCompact("manual", args, signal),
          mask: (text) => conversation.maskKnownKeys(text),
        }).catch((error) => {
          if (!(error instanceof CompactionCancelledError)) throw error;
          context.notice("not compacted: cancelled, the conversation is unchanged");
          return null;
        });
        if (entry === null) return;
        if (!entry) {
          context.notice("nothing to compact: the whole conversation is recent enough to keep");
          return;
        }
        context.notice(
          `compacted ${summarisedCount(entry)} entries: ${entry.tokensBefore} → ` +
            `${entry.tokensAfter} tokens${entry.fallback ? " (fallback summary)" : ""}`,
        );
      },
    },
    {
      name: "hooks",
      description: "lifecycle hooks: each one, where it is configured, trusted or not",
      whileRunning: true,
      run: async (context) => {
        const [{ loadHooks }, { hooksText }, { terminalText }] = await Promise.all([
          import("../../sandbox/hooks/load.ts"),
          import("../hooks.ts"),
          import("../../core/terminal_text.ts"),
        ]);
        const hooks = await loadHooks({
          ternHome: context.config.ternHome,
          workspace: context.workspace,
        });
        // Commands and paths are the repository's words: made safe for the terminal.
        context.print(terminalText(hooksText(hooks)).trimEnd().split("\n"));
      },
    },
  ];
}

/** Yes or no, No first: a stray Enter keeps the conversation as it is. */
async function confirmCompaction(context: CommandContext): Promise<boolean> {
  const answer = await context.pick(selectDialog({
    theme: context.theme,
    title: "Compact the conversation? Pinned instructions (/pin) are always kept.",
    items: [
      { label: "No, keep the conversation as it is", value: false },
      { label: "Yes, summarise the older part", value: true },
    ],
  }));
  return answer === true;
}

async function pickSession(context: CommandContext): Promise<string | undefined> {
  const sessions = await listSessions(context.config.ternHome, { cwd: context.workspace });
  if (sessions.length === 0) {
    context.notice("no sessions to resume in this directory");
    return undefined;
  }
  return await context.pick(selectDialog({
    theme: context.theme,
    title: "Resume session",
    items: sessions.map((info) => ({
      label: sessionLabel(info, context),
      detail: shownId(info.id),
      value: info.path,
    })),
    filterable: true,
  }));
}

async function findOne(context: CommandContext, ref: string): Promise<string> {
  return await findSession(context.config.ternHome, ref, context.workspace);
}

/** A session's row in /sessions and the /resume picker: its first request masked for keys. */
function sessionLabel(info: SessionInfo, context: CommandContext): string {
  const when = info.modified.toISOString().slice(0, 16).replace("T", " ");
  const current = info.path === context.session.path ? " (current)" : "";
  const first = info.firstUserText === undefined
    ? "(no messages)"
    : context.mask(info.firstUserText);
  return `${shownId(info.id.slice(0, 8))}  ${when}  ${first}${current}`;
}

/** Every entry in tree order (depth first, children in file order), with its depth. */
export function treeRows(
  entries: readonly SessionEntry[],
): Array<{ entry: SessionEntry; depth: number }> {
  const tree = new SessionTree(entries);
  const rows: Array<{ entry: SessionEntry; depth: number }> = [];
  // Only forks deepen the indentation: a straight run of entries stays at one depth.
  const stack = [...tree.roots].reverse().map((entry) => ({ entry, depth: 0 }));
  while (stack.length > 0) {
    const { entry, depth } = stack.pop()!;
    rows.push({ entry, depth });
    const children = tree.children(entry.id);
    const childDepth = children.length > 1 ? depth + 1 : depth;
    for (let i = children.length - 1; i >= 0; i--) {
      stack.push({ entry: children[i], depth: childDepth });
    }
  }
  return rows;
}
