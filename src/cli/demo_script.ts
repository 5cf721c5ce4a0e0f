/**
 * The scripted model of `tern demo` and the project it builds: which request is which is read
 * from the request itself (the planner's system prompt, a plan step's prompt, the person's last
 * message), and each reply follows from what the tools answered before.
 */
import type { Message } from "../core/messages.ts";
import type { ScriptedReply } from "../llm/scripted.ts";
import type { ModelRequest } from "../llm/types.ts";
import { PLANNER_SYSTEM_PROMPT } from "../plan/planner_prompt.ts";
import type { PlanNode } from "../plan/types.ts";

/** The first message: one turn of single tool calls. */
export const TURN_TASK = "Look around this project, add src/greet.ts exporting greet(name), " +
  "count its lines with a command, try to leave a note outside the project, make the greeting " +
  "friendlier and check the file by reading it back.";

/** The second: a plan whose first two steps run at once and whose third needs both. */
export const PLAN_TASK = "Add farewell(name) in src/farewell.ts and shout(text) in " +
  "src/shout.ts, then export greet, farewell and shout from src/mod.ts.";

/** The third, in the session resumed from its file: a search of the code index. */
export const RESUME_TASK = "Where does this project make its greetings? Search the code.";

/** What the resumed turn searches for. */
export const SEARCH_QUERY = "greeting farewell";

/** The steps of the first turn, printed under PLAN (one per tool call of the script). */
export const TURN_STEPS = [
  "list the project (list)",
  "create src/greet.ts (write)",
  "count its lines with a sandboxed command (bash: wc -l)",
  "write ../escape.txt, outside the workspace: the sandbox must refuse it (write)",
  "edit the greeting, shown as a diff (edit)",
  "read src/greet.ts back and check it (read)",
];

export const OLD_GREETING = "Hello, ${name}.";
const NEW_GREETING = "Hello, ${name}! Welcome to tern.";

export const GREETING_SOURCE = `/** Returns a friendly greeting for \`name\`. */
export function greet(name: string): string {
  return \`Hello, \${name}.\`;
}
`;

/** The files the demo leaves in its project, as they must read on disk at the end. */
export const EXPECTED_FILES: Record<string, string> = {
  "src/greet.ts": GREETING_SOURCE.replace(OLD_GREETING, NEW_GREETING),
  "src/farewell.ts": `/** Says goodbye to \`name\`: the closing greeting. */
export function farewell(name: string): string {
  return \`Goodbye, \${name}. See you soon.\`;
}
`,
  "src/shout.ts": `/** \`text\` in capitals, with an exclamation mark. */
export function shout(text: string): string {
  return \`\${text.toUpperCase()}!\`;
}
`,
  "src/mod.ts": `export { greet } from "./greet.ts";
export { farewell } from "./farewell.ts";
export { shout } from "./shout.ts";
`,
};

/** The graph the scripted planner answers: `farewell` and `shout` at once, then `exports`. */
export const PLAN_NODES: PlanNode[] = [
  {
    id: "farewell",
    title: "Add farewell(name)",
    task: "Create src/farewell.ts exporting farewell(name), which returns a goodbye.",
    dependsOn: [],
  },
  {
    id: "shout",
    title: "Add shout(text)",
    task: "Create src/shout.ts exporting shout(text), which returns the text in capitals.",
    dependsOn: [],
  },
  {
    id: "exports",
    title: "Export all from src/mod.ts",
    task: "Create src/mod.ts exporting greet, farewell and shout from their files.",
    dependsOn: ["farewell", "shout"],
  },
];

const NODE_FILES: Record<string, string> = {
  farewell: "src/farewell.ts",
  shout: "src/shout.ts",
  exports: "src/mod.ts",
};

/** What the script saw, for the demo's checks. */
export interface ScriptWitness {
  /** The code_search tool's answer, as the model got it. */
  searchOutput?: string;
  /** The resumed turn's first request carried the first turn and the plan from the file. */
  resumedHistory?: boolean;
  /** How many messages (not the system prompt) came before the resumed turn's own. */
  resumedMessages?: number;
  /** The dependent step's prompt held the results of both steps it depends on. */
  dependentInputs?: boolean;
}

/**
 * The scripted model: answers each request of the demo from its content, noting in `witness`
 * what the checks need. `show` prints a tool's output under its tool line.
 */
export function demoScript(
  witness: ScriptWitness,
  show: (toolOutput: string) => void,
): (request: ModelRequest) => ScriptedReply {
  return (request) => {
    if (request.messages[0]?.content === PLANNER_SYSTEM_PROMPT) {
      return { text: JSON.stringify({ nodes: PLAN_NODES }) };
    }
    const { task, step, lastTool } = position(request.messages);
    const node = /Your step \("([\w-]+)"/.exec(task)?.[1];
    if (node !== undefined) return planStep(node, task, step, witness);
    const call = (name: string, args: Record<string, unknown>): ScriptedReply => ({
      toolCalls: [{ id: `demo_${step}`, name, arguments: JSON.stringify(args) }],
    });
    if (task.startsWith(RESUME_TASK)) {
      if (step === 0) {
        const earlier = request.messages.map((message) => message.content).join("\n");
        witness.resumedHistory = earlier.includes(TURN_TASK) && earlier.includes(PLAN_TASK);
        witness.resumedMessages = request.messages.filter((m) => m.role !== "system").length - 1;
        return call("code_search", { query: SEARCH_QUERY, limit: 4 });
      }
      witness.searchOutput = lastTool;
      show(lastTool);
      const files = [...new Set(lastTool.match(/^src\/\S+?\.ts(?=:)/gm) ?? [])];
      return { text: `Greetings are made in ${files.join(", ") || "no file I could find"}.` };
    }
    if (step === 3) show(lastTool); // the sandboxed command's output
    switch (step) {
      case 0:
        return { text: "I'll look at the project first.", ...call("list", { path: "." }) };
      case 1:
        return call("write", { path: "src/greet.ts", content: GREETING_SOURCE });
      case 2:
        return call("bash", { command: "wc -l src/greet.ts", description: "count its lines" });
      case 3:
        return call("write", { path: "../escape.txt", content: "left the workspace\n" });
      case 4:
        return call("edit", {
          path: "src/greet.ts",
          old_string: OLD_GREETING,
          new_string: NEW_GREETING,
        });
      case 5:
        return call("read", { path: "src/greet.ts" });
      default: {
        const verified = lastTool.startsWith("SUCCEEDED") && lastTool.includes(NEW_GREETING);
        return {
          text: verified
            ? "Created src/greet.ts, counted its lines in the sandbox, was refused the write " +
              "outside the workspace, made the greeting friendlier and read the file back."
            : "src/greet.ts did not read back as edited.",
        };
      }
    }
  };
}

/** A plan step's worker: writes its file, then reports (the dependent step checks its inputs). */
function planStep(node: string, prompt: string, step: number, witness: ScriptWitness) {
  const path = NODE_FILES[node];
  if (step === 0) {
    if (node === "exports") {
      witness.dependentInputs = prompt.includes("## farewell:") && prompt.includes("## shout:");
    }
    return {
      toolCalls: [{
        id: `demo_${node}`,
        name: "write",
        arguments: JSON.stringify({ path, content: EXPECTED_FILES[path] }),
      }],
    };
  }
  return { text: `Wrote ${path}.` };
}

/** The person's last message, how many model calls answered it so far, the last tool result. */
function position(messages: readonly Message[]) {
  const userAt = messages.findLastIndex((message) => message.role === "user");
  const after = messages.slice(userAt + 1);
  const last = messages.at(-1);
  return {
    task: userAt === -1 ? "" : messages[userAt].content,
    step: after.filter((message) => message.role === "assistant").length,
    lastTool: last?.role === "tool" ? last.content : "",
  };
}
