/**
 * The reference agent: the floor the benchmarks compare tern with. About a hundred lines of
 * Deno and nothing else: one `bash` tool (`bash -c`, no sandbox, no review), `fetch` of an
 * OpenAI Chat Completions stream with a small SSE parser, and a loop until the model answers
 * without tool calls. No config, no session, no tool worker: what any agent must at least do.
 *
 * Usage: deno run --allow-net=<host> --allow-run=bash reference_agent.ts <baseUrl> <model> <task>
 * Prints the final answer on stdout; exits 1 when the model API fails.
 */

interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

interface Message {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}

const BASH_TOOL = {
  type: "function",
  function: {
    name: "bash",
    description: "Runs a bash command and returns its output and exit code.",
    parameters: {
      type: "object",
      properties: { command: { type: "string", description: "The command" } },
      required: ["command"],
    },
  },
};

/** The `data:` payloads of an SSE stream, one at a time. */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffer = "";
  for await (const text of body.pipeThrough(new TextDecoderStream())) {
    buffer += text;
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event.split("\n").filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trimStart()).join("\n");
      if (data !== "") yield data;
    }
  }
}

/** One streamed model call: the assistant message it built. */
async function complete(baseUrl: string, model: string, messages: Message[]): Promise<Message> {
  const response = await fetch(`${baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer none" },
    body: JSON.stringify({ model, messages, tools: [BASH_TOOL], stream: true }),
  });
  if (!response.ok || response.body === null) {
    throw new Error(`Cannot call the model API: HTTP ${response.status} ${await response.text()}`);
  }
  let content = "";
  const calls: ToolCall[] = [];
  for await (const data of sseData(response.body)) {
    if (data === "[DONE]") break;
    const delta = JSON.parse(data).choices?.[0]?.delta ?? {};
    if (typeof delta.content === "string") content += delta.content;
    for (const part of delta.tool_calls ?? []) {
      const call = calls[part.index] ??= {
        id: "",
        type: "function",
        function: { name: "", arguments: "" },
      };
      if (part.id) call.id = part.id;
      if (part.function?.name) call.function.name += part.function.name;
      if (part.function?.arguments) call.function.arguments += part.function.arguments;
    }
  }
  const message: Message = { role: "assistant", content: content || null };
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

/** Runs one `bash` call: output and exit code as the tool's result. */
async function runBash(args: string): Promise<string> {
  let command: string;
  try {
    command = String(JSON.parse(args).command);
  } catch {
    return `Arguments are not valid JSON: ${args}`;
  }
  const out = await new Deno.Command("bash", { args: ["-c", command], stdin: "null" }).output();
  const decoder = new TextDecoder();
  return `${decoder.decode(out.stdout)}${decoder.decode(out.stderr)}\n[exit code ${out.code}]`;
}

/** The agent loop: model, tools, model… until an answer without tool calls. */
export async function runAgent(baseUrl: string, model: string, task: string): Promise<string> {
  const messages: Message[] = [
    { role: "system", content: "You are a coding agent. Use the bash tool when needed." },
    { role: "user", content: task },
  ];
  for (;;) {
    const reply = await complete(baseUrl, model, messages);
    messages.push(reply);
    if (!reply.tool_calls) return reply.content ?? "";
    for (const call of reply.tool_calls) {
      const result = call.function.name === "bash"
        ? await runBash(call.function.arguments)
        : `There is no tool "${call.function.name}"`;
      messages.push({ role: "tool", tool_call_id: call.id, content: result });
    }
  }
}

if (import.meta.main) {
  const [baseUrl, model, task] = Deno.args;
  if (task === undefined) {
    console.error("Usage: reference_agent.ts <baseUrl> <model> <task>");
    Deno.exit(2);
  }
  try {
    console.log(await runAgent(baseUrl, model, task));
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    Deno.exit(1);
  }
}
