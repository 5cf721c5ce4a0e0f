/**
 * Pinned instructions (`/pin`): the person's standing instructions for a session. They go into
 * every request right after the system prompt, so no compaction can summarise them away.
 */

/** The heading of the pinned section; what follows it is the person's own words. */
export const PINS_HEADING = "# Pinned instructions from the user (they hold for the whole session)";

/** `system` followed by the pinned instructions, numbered; `system` itself when there are none. */
export function withPins(system: string, pins: readonly string[] | undefined): string {
  if (pins === undefined || pins.length === 0) return system;
  const list = pins.map((pin, i) => `${i + 1}. ${pin}`).join("\n");
  return `${system}\n\n${PINS_HEADING}\n\n${list}`;
}
