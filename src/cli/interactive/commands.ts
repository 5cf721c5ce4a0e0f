/**
 * Slash commands: one registry for the built-in commands and those later features add
 * (prompt templates appear as `/name`). A command gets the app through `CommandContext`.
 */
import type { Theme } from "../../tui/theme.ts";
import type { Dialog } from "../../tui/dialog.ts";
import type { Session } from "../../session/session.ts";
import type { TernConfig } from "../../config/mod.ts";
import type { Conversation } from "../../harness/conversation.ts";

/** What a command can do to the interactive session. */
export interface CommandContext {
  readonly workspace: string;
  readonly theme: Theme;
  /** Current settings (model, thinking, mode, profile, …). */
  readonly config: TernConfig;
  /** The conversation, once the models are connected. */
  conversation(): Promise<Conversation>;
  readonly session: Session;
  /** Writes lines into the transcript (scrollback). */
  print(lines: string[]): void;
  /** A one-line notice in the transcript. */
  notice(text: string, kind?: "info" | "warning" | "error"): void;
  /**
   * `text` with the keys tern holds now and the key formats masked, for what a command shows of
   * a session: a session keeps a key unmasked when tern did not hold it then.
   */
  mask(text: string): string;
  /**
   * Shows a dialog in place of the editor until it is done. In line mode (`canAsk` false) it
   * rejects at once: no one is there to answer.
   */
  pick<T>(dialog: Dialog<T>): Promise<T>;
  /**
   * A person can answer a dialog (a terminal). False in line mode: a command that would ask
   * checks it first and names what to give it instead.
   */
  readonly canAsk: boolean;
  /** Terminal width in cells. */
  width(): number;
  /** Changes settings for the next turn (the sandbox reopens for mode and profile). */
  configure(change: Partial<TernConfig>): Promise<void>;
  /** Makes `session` the one the conversation appends to (the old one is closed). */
  switchSession(session: Session, options?: { replay?: boolean }): Promise<void>;
  /** Every registered command, for /help. */
  commands(): readonly SlashCommand[];
  /** Ends the interactive session. */
  exit(): void;
  /** Clears the screen (not the scrollback) and replays the transcript from the session. */
  redraw(): void;
}

export interface SlashCommand {
  /** Without the slash. */
  name: string;
  /** One line for /help and completion. */
  description: string;
  /** Arguments, for /help (e.g. "[level]"). */
  usage?: string;
  /** May run while a turn is running (otherwise the person is asked to wait or press Esc). */
  whileRunning?: boolean;
  /** `signal` fires when the person presses Esc or Ctrl-C while the command runs alone. */
  run(context: CommandContext, args: string, signal: AbortSignal): Promise<void> | void;
  /**
   * A command that is a message (a prompt template, a skill): the text it returns for `args`
   * is sent as the person's turn instead of `run`. It throws to refuse bad arguments.
   */
  message?(args: string): Promise<string>;
}

/**
 * The slash commands by name. A later command replaces an earlier one of its name, but a message
 * (a prompt template, a skill: text a repository may write) never replaces one of tern's own.
 */
export class CommandRegistry {
  readonly #commands = new Map<string, SlashCommand>();

  constructor(commands: readonly SlashCommand[] = []) {
    for (const command of commands) this.register(command);
  }

  /**
   * Adds `command`; false (and nothing changed) when it is a message named like a built-in, in
   * any case (`Help.md` would otherwise be listed as `/Help`, which runs `/help`).
   */
  register(command: SlashCommand): boolean {
    const known = this.#commands.get(command.name) ??
      this.#commands.get(command.name.toLowerCase());
    if (known !== undefined && known.message === undefined && command.message !== undefined) {
      return false;
    }
    this.#commands.set(command.name, command);
    return true;
  }

  /**
   * The command `/name` runs: tern's own in any case (`/HELP`), else the template or skill of
   * exactly that name (templates keep their case: `Save.md` is `/Save`), else of it in lower case.
   */
  get(name: string): SlashCommand | undefined {
    const lower = this.#commands.get(name.toLowerCase());
    if (lower !== undefined && lower.message === undefined) return lower;
    return this.#commands.get(name) ?? lower;
  }

  /** Sorted by name. */
  list(): SlashCommand[] {
    return [...this.#commands.values()].sort((a, b) => a.name.localeCompare(b.name));
  }
}

/**
 * `/name rest` split into the command name, as typed, and its argument text; undefined when
 * `text` is not a command (no leading slash, or a path such as `/usr/bin`: a slash inside the
 * name). A name is what a prompt template's may be (letters of either case, digits, `_`, `.`,
 * `-`, as `tern run` takes it) or a skill's `skill:name`; {@linkcode CommandRegistry.get}
 * matches tern's own commands in any case.
 */
export function parseCommandLine(text: string): { name: string; args: string } | undefined {
  const match = /^\/([A-Za-z0-9][\w.:-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  return { name: match[1], args: (match[2] ?? "").trim() };
}
