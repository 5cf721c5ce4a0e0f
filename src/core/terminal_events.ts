/**
 * Agent events made safe for a terminal: every string through `terminalText()`, and the
 * streamed ones (answer, reasoning, a tool's output) through a `streamCleaner()` each, so a
 * sequence split across two deltas is removed whole. Front ends that draw events (the TUI, the
 * text output of `tern run`) see only these; JSON output is escaped by JSON.
 *
 * Except what runs: a call's tool name and arguments (`tool_start`, `tool_input`, `tool_end`)
 * and a permission request's name and summary come through as written, and every front end
 * shows them with `visibleText()`
 * (controls as `␛`, `␇`, never obeyed). Removing a sequence would remove its payload too, so
 * `echo a; ␛]0;$(touch x)␇` would show as `echo a; ` while `touch x` runs.
 */
import type { AgentEvent } from "./events.ts";
import { cleanDeep, streamCleaner, type TextStreamCleaner } from "./terminal_text.ts";

/** Maps one event to the clean events to draw: text held back earlier comes out first. */
export type EventCleaner = (event: AgentEvent) => AgentEvent[];

/** A cleaner for one event stream (one turn after another); keeps the held-back pieces. */
export function createEventCleaner(): EventCleaner {
  let text: { stream: TextStreamCleaner; round: number } | undefined;
  let thinking: { stream: TextStreamCleaner; round: number } | undefined;
  const tools = new Map<string, TextStreamCleaner>();
  return (event) => {
    const out: AgentEvent[] = [];
    if (event.type !== "text_delta" && text !== undefined) {
      const rest = text.stream.flush();
      if (rest !== "") out.push({ type: "text_delta", round: text.round, text: rest });
      text = undefined;
    }
    if (event.type !== "thinking_delta" && thinking !== undefined) {
      const rest = thinking.stream.flush();
      if (rest !== "") out.push({ type: "thinking_delta", round: thinking.round, text: rest });
      thinking = undefined;
    }
    switch (event.type) {
      case "text_delta": {
        text ??= { stream: streamCleaner(), round: event.round };
        const shown = text.stream.push(event.text);
        if (shown !== "") out.push({ ...event, text: shown });
        return out;
      }
      case "thinking_delta": {
        thinking ??= { stream: streamCleaner(), round: event.round };
        const shown = thinking.stream.push(event.text);
        if (shown !== "") out.push({ ...event, text: shown });
        return out;
      }
      case "tool_update": {
        const callId = cleanDeep(event.callId);
        let stream = tools.get(callId);
        if (stream === undefined) tools.set(callId, stream = streamCleaner());
        const shown = stream.push(event.text);
        if (shown !== "") out.push({ type: "tool_update", callId, text: shown });
        return out;
      }
      case "tool_start":
      case "tool_input":
        out.push({
          ...cleanDeep({ ...event, args: undefined }),
          name: event.name,
          args: event.args,
        });
        return out;
      case "permission_request":
        out.push({ ...cleanDeep(event), name: event.name, summary: event.summary });
        return out;
      case "tool_end": {
        const clean = { ...cleanDeep(event), name: event.name };
        const rest = tools.get(clean.callId)?.flush() ?? "";
        tools.delete(clean.callId);
        if (rest !== "") out.push({ type: "tool_update", callId: clean.callId, text: rest });
        out.push(clean);
        return out;
      }
      default:
        out.push(cleanDeep(event));
        return out;
    }
  };
}
