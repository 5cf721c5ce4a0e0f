/** One-line texts for the transcript's notices: retries, model switches, compaction, turn end. */
import type { AgentEvent } from "../core/events.ts";
import type { Usage } from "../core/messages.ts";
import { formatCost } from "../llm/model_info.ts";
import { firstLine, formatDuration, formatTokens, plural } from "./format.ts";
import type { Theme } from "./theme.ts";

type EventOf<T extends AgentEvent["type"]> = Extract<AgentEvent, { type: T }>;

const VOID_NOTE = " (the partial answer above is void)";

/** `↻ model call failed: reason; retry 2 in 1.0s`, dim; `voided` adds a note. */
export function retryText(event: EventOf<"retry">, voided: boolean, theme: Theme): string {
  return theme.dim(
    `↻ model call failed: ${firstLine(event.reason)}; retry ${event.attempt} in ` +
      `${formatDuration(event.delayMs)}${voided ? VOID_NOTE : ""}`,
  );
}

/** `↻ model call failed: reason · retrying in 2s · attempt 3`, plain: the live retry line. */
export function liveRetryText(event: EventOf<"retry">, leftMs: number): string {
  const wait = leftMs > 0 ? `retrying in ${Math.ceil(leftMs / 1000)}s` : "retrying";
  return `↻ model call failed: ${firstLine(event.reason)} · ${wait} · attempt ${event.attempt}`;
}

/** `↪ a/m failed: reason; switching to b/n`, dim; `voided` adds a note. */
export function switchText(event: EventOf<"model_switch">, voided: boolean, theme: Theme): string {
  return theme.dim(
    `↪ ${event.from} failed: ${firstLine(event.reason)}; switching to ${event.to}` +
      (voided ? VOID_NOTE : ""),
  );
}

/** `⇣ compacted 12 messages: 120k → 8.1k tokens`, dim, with a yellow note for a fallback. */
export function compactionText(event: EventOf<"compaction">, theme: Theme): string {
  const line = theme.dim(
    `⇣ compacted ${plural(event.summarised, "message")}: ${formatTokens(event.tokensBefore)}` +
      ` → ${formatTokens(event.tokensAfter)} tokens` +
      (event.imagesDropped ? `, ${plural(event.imagesDropped, "image")} dropped` : ""),
  );
  if (!event.fallback) return line;
  const why = firstLine(event.error ?? "the summary call failed");
  return `${line} ${theme.yellow(`(fallback summary: ${why})`)}`;
}

/**
 * The dim footer under a turn:
 * `─ 2 rounds · 3 tools · 12.3k in (10k cached) · 321 out · $0.0012 · 4.1s`. Token counts are
 * left out when none were reported, the time when `elapsedMs` is undefined.
 */
export function footerText(
  event: EventOf<"turn_end">,
  elapsedMs: number | undefined,
  theme: Theme,
): string {
  const parts = [
    plural(event.rounds, "round"),
    plural(event.toolCalls, "tool"),
    ...usageParts(event.usage),
  ];
  if (event.cost !== undefined) parts.push(formatCost(event.cost));
  if (elapsedMs !== undefined) parts.push(formatDuration(elapsedMs));
  return theme.dim(`─ ${parts.join(" · ")}`);
}

function usageParts(usage: Usage): string[] {
  if (usage.inputTokens + usage.outputTokens === 0) return [];
  const cached = usage.cachedTokens > 0 ? ` (${formatTokens(usage.cachedTokens)} cached)` : "";
  return [
    `${formatTokens(usage.inputTokens)} in${cached}`,
    `${formatTokens(usage.outputTokens)} out`,
  ];
}
