/**
 * A stdio server that closes its stdout and runs on can never answer again: tern stops it at
 * once (FAILED, saying so, its processes gone) rather than letting each call wait for its
 * timeout. A real process, the SDK's client.
 */
import { equal, match, ok } from "node:assert/strict";
import { processesMatching, stdioServer, withManager } from "./_servers.ts";

Deno.test("a server that closes its stdout mid-call fails the call at once and is stopped", async () => {
  const tag = `tag-${crypto.randomUUID()}`;
  // bash, as Deno keeps its stdout open whatever a script closes.
  const script = `
    while IFS= read -r line; do
      [[ $line =~ \\"id\\":([0-9]+) ]] || continue
      id=\${BASH_REMATCH[1]}
      case $line in
        *'"method":"initialize"'*)
          printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18",' "$id"
          printf '"capabilities":{"tools":{}},"serverInfo":{"name":"mute","version":"1"}}}\\n' ;;
        *'"method":"tools/list"'*)
          printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"ask",' "$id"
          printf '"inputSchema":{"type":"object"}}]}}\\n' ;;
        *'"method":"tools/call"'*) exec 1>&-; sleep 300 ;;
      esac
    done
  `;
  const server = stdioServer("mute", { command: "bash", args: ["-c", script, tag] }, {
    requestTimeoutMs: 60_000,
  });
  await withManager([server], async (manager) => {
    manager.start();
    await manager.settled();
    equal(manager.status()[0].state, "READY");
    const started = performance.now();
    const result = await manager.tool("mcp__mute__ask")!.run({}, {
      signal: new AbortController().signal,
    });
    const took = performance.now() - started;
    ok(took < 10_000, `the call took ${Math.round(took)} ms`);
    equal(result.status, "ERROR");
    const message = result.status === "ERROR" ? result.message : "";
    match(message, /MCP server "mute" closed the connection during "ask"/);
    match(message, /closed its stdout but runs on/);
    const [status] = manager.status();
    equal(status.state, "FAILED");
    equal((await processesMatching(tag)).length, 0, "the server was stopped");
  });
});
