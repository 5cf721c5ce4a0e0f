/**
 * A tern-like process for compaction_kill_test.ts: opens the session at `Deno.args[0]` and
 * compacts it with the model server at `Deno.args[1]`, as a turn does. The test kills it.
 */
import { compactionSettings, compactSession } from "../../src/agent/session_turn.ts";
import { createOpenAiChatProvider } from "../../src/llm/openai_chat.ts";
import { Session } from "../../src/session/session.ts";

const [path, baseUrl] = Deno.args;
const session = await Session.open(path);
console.log("opened");
const entry = await compactSession(session, {
  provider: createOpenAiChatProvider({ baseUrl }),
  model: "scripted",
  settings: { ...compactionSettings(32_000, 0.8), keepRecentTokens: 500 },
});
console.log(entry ? "compacted" : "nothing");
session.close();
