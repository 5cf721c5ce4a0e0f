/**
 * The scripted server's WebSocket mode of the Responses API, as OpenAI documents it: each
 * client message is `{"type":"response.create", …}` with the HTTP body's fields (no `stream`);
 * the reply is the same events as the SSE stream, one per text frame; one response at a time
 * per socket; `previous_response_id` names the socket's last response (kept in memory only,
 * as with `store: false`), whose input and output items go before the new `input`. An unknown
 * id is answered with an `error` event of code `previous_response_not_found`. The `<drop>`
 * step closes the socket abruptly (code 1011).
 */
import { type Script, scriptedReplyFor } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { RecordedRequest } from "./scripted_server.ts";
import { responsesDialect } from "./scripted_server_responses.ts";
import { sleep, waitFor } from "./abortable_wait.ts";

/** What a socket needs from the server that accepted it. */
export interface SocketContext {
  script: Script;
  model: string;
  delayMs: number;
  closing: AbortSignal;
  /** Records a request; returns its index among all requests (HTTP and socket). */
  record: (request: RecordedRequest) => number;
  beforeReply?: (request: ModelRequest) => Promise<void>;
}

interface LastResponse {
  id: string;
  items: unknown[];
}

/** The server's sockets: accepting, counting, forgetting their responses, closing. */
export class ScriptedSockets {
  /** Live counts, read by tests. */
  readonly counts = { opened: 0, open: 0 };
  #last = new Map<WebSocket, LastResponse | undefined>();

  /** Upgrades `req` and serves `response.create` events on it. */
  accept(req: Request, context: SocketContext): Response {
    // Read before the upgrade: the request's headers are gone after it.
    const headers = Object.fromEntries(req.headers);
    const { socket, response } = Deno.upgradeWebSocket(req);
    this.counts.opened++;
    this.counts.open++;
    this.#last.set(socket, undefined);
    let queue = Promise.resolve();
    socket.addEventListener("message", (event) => {
      const text = typeof event.data === "string" ? event.data : "";
      // One response at a time, in order, as the API does.
      queue = queue.then(() => this.#answer(socket, text, headers, context)).catch(() => {});
    });
    socket.addEventListener("close", () => {
      this.counts.open--;
      this.#last.delete(socket);
    });
    return response;
  }

  /** Forgets every socket's last response. */
  forget(): void {
    for (const socket of this.#last.keys()) this.#last.set(socket, undefined);
  }

  /** Closes every open socket. */
  closeAll(): void {
    for (const socket of this.#last.keys()) {
      if (socket.readyState === WebSocket.OPEN) socket.close(1001, "server closing");
    }
  }

  async #answer(
    socket: WebSocket,
    text: string,
    headers: Record<string, string>,
    context: SocketContext,
  ): Promise<void> {
    const send = (value: unknown) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(value));
    };
    const event = JSON.parse(text) as Record<string, unknown>;
    if (event.type !== "response.create") {
      return send(socketError("invalid_request_error", null, `Unknown event "${event.type}"`));
    }
    const { type: _type, previous_response_id: previous, ...fields } = event;
    const last = this.#last.get(socket);
    if (previous !== undefined && previous !== null && previous !== last?.id) {
      return send(socketError(
        "invalid_request_error",
        "previous_response_not_found",
        `Previous response with id '${previous}' not found.`,
      ));
    }
    const input = Array.isArray(fields.input) ? fields.input : [];
    const fullInput = previous ? [...(last?.items ?? []), ...input] : input;
    const body = { ...fields, input: fullInput };
    const modelRequest = responsesDialect.toModelRequest(body);
    const index = context.record({
      method: "WS",
      path: "/v1/responses",
      headers,
      body: event,
      modelRequest,
      transport: "websocket",
      bytes: new TextEncoder().encode(text).length,
    });
    await context.beforeReply?.(modelRequest);
    const reply = scriptedReplyFor(context.script, modelRequest, index);
    if ("error" in reply) return send(socketError("server_error", null, reply.error));
    const steps = responsesDialect.replySteps(reply, modelRequest, index, {
      model: context.model,
      body,
    });
    for (const step of steps) {
      if (context.closing.aborted || socket.readyState !== WebSocket.OPEN) return;
      if (step === "<hang>") return await waitFor(context.closing);
      if (step === "<drop>") return socket.close(1011, "scripted drop");
      if (context.delayMs > 0) await sleep(context.delayMs, context.closing);
      const data = typeof step === "string" ? step : step.data;
      const parsed = JSON.parse(data) as { type?: string; response?: { id?: string; output?: [] } };
      if (parsed.type === "response.completed" && parsed.response?.id) {
        this.#last.set(socket, {
          id: parsed.response.id,
          items: [...fullInput, ...(parsed.response.output ?? [])],
        });
      }
      if (socket.readyState === WebSocket.OPEN) socket.send(data);
    }
  }
}

/** An `error` event as the WebSocket mode sends it. */
function socketError(type: string, code: string | null, message: string) {
  return { type: "error", status: 400, error: { type, code, message, param: null } };
}
