/**
 * /pin: the person's standing instructions for this session. Each change writes the whole list
 * as a `pins` session entry; every request carries them right after the system prompt, and
 * compactions never summarise them (the checkpoint keeps them).
 */
import { terminalText } from "../../core/terminal_text.ts";
import type { CommandContext, SlashCommand } from "./commands.ts";

/** Longest pinned instruction, in characters: it rides along in every request. */
export const MAX_PIN_CHARS = 2_000;
/** Most pinned instructions a session may hold. */
export const MAX_PINS = 20;

export function pinCommand(): SlashCommand {
  return {
    name: "pin",
    description: "instructions kept in every request, whatever is compacted (list, add, rm <n>)",
    usage: "[text | rm <n>]",
    run: (context, args) => {
      const text = args.trim();
      if (text === "") return listPins(context);
      const remove = /^rm\s+(\S+)$/.exec(text);
      if (remove) return removePin(context, remove[1]);
      addPin(context, text);
    },
  };
}

function currentPins(context: CommandContext): string[] {
  return context.session.state().pins ?? [];
}

function listPins(context: CommandContext): void {
  const pins = currentPins(context);
  if (pins.length === 0) {
    context.notice("no pinned instructions: /pin <text> adds one");
    return;
  }
  // A resumed session's pins may hold a key tern did not hold when they were written.
  context.print(pins.map((pin, i) => `${i + 1}. ${terminalText(context.mask(pin))}`));
}

function addPin(context: CommandContext, text: string): void {
  const pins = currentPins(context);
  if (text.length > MAX_PIN_CHARS) {
    throw new Error(
      `Cannot pin "${text.slice(0, 40)}…": longer than ${MAX_PIN_CHARS} characters`,
    );
  }
  if (pins.length >= MAX_PINS) {
    throw new Error(`Cannot pin "${text.slice(0, 40)}": already ${MAX_PINS} pins (/pin rm <n>)`);
  }
  context.session.append({ type: "pins", pins: [...pins, text] });
  context.notice(`pinned ${pins.length + 1}: kept in every request, whatever is compacted`);
}

function removePin(context: CommandContext, which: string): void {
  const pins = currentPins(context);
  const n = Number(which);
  if (!Number.isInteger(n) || n < 1 || n > pins.length) {
    throw new Error(
      `Cannot remove pin "${which}": ${
        pins.length === 0 ? "there are none" : `pick a number from 1 to ${pins.length}`
      }`,
    );
  }
  context.session.append({ type: "pins", pins: pins.filter((_, i) => i !== n - 1) });
  context.notice(`unpinned ${n}: ${terminalText(context.mask(pins[n - 1]))}`);
}
