/**
 * What connecting an agent session loads (agent_session.ts), as one module: the models'
 * connection, the conversation, the MCP setup, the memory store and the subagents' host. A
 * front end opens a session (config, session file) before any of it is needed, and the
 * interactive UI draws its prompt in between, so none of it is in agent_session.ts's own
 * graph; but it is all needed at once, so it loads in one `import()`. Deno runs each `import()`
 * as a module-graph load of its own, at about 0.3 ms however small the module (measured in
 * the bundle: bench/results/first_request_limits.md, sixteenth session), and connecting made
 * thirteen of them on `tern run`'s way to its first model request.
 */
export { connectModels } from "./models.ts";
export { Conversation } from "./conversation.ts";
export { killOnExit, openMcp, watchMcp } from "./mcp_setup.ts";
export { MemoryStore } from "../memory/facts.ts";
export { lazyKeyMasker } from "../sandbox/secrets.ts";
export { SubagentHost } from "./subagents/host.ts";
export { preloadSubagentTools, subagentTools } from "./subagents/tool_specs.ts";
export { checkChildModel } from "./subagents/models.ts";
