/**
 * A host whose worker gets stuck: starts a WorkerHost with the test handler, calls "spin",
 * prints the worker's pid once the call has started, and waits (the test then kills it).
 */
import { WorkerHost } from "../../../src/sandbox/worker/host.ts";

const workspace = Deno.args[0];
const host = new WorkerHost({
  grants: { read: [workspace], write: [], net: [], env: [], run: [] },
  handlerUrl: new URL("./test_handler.ts", import.meta.url),
  workspace,
});
let printed = false;
void host.call("spin", {}, {
  onUpdate: () => {
    if (printed) return;
    printed = true;
    console.log(host.pid);
  },
});
setInterval(() => {}, 60_000);
