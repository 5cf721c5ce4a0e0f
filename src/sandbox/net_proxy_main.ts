/**
 * The proxy process of one command with host grants: `net_proxy_main.ts <socket> <host>...`
 * serves `startNetProxy` on `<socket>` for the hosts given, prints `ready` once it listens,
 * then one JSON line per host it connected the command to or refused (`{"kind":"connected",
 * "host":"example.com:443"}`), until it is killed or its stdin closes (tern ended, even by a
 * crash): then it removes its socket, which ends the forwarder too. Started by `proxyArgv`.
 */
import { entryArgs } from "../core/packaging.ts";
import { startNetProxy } from "./net_proxy.ts";

const [socket, ...hosts] = entryArgs();
const encoder = new TextEncoder();
const say = (line: string) => Deno.stdout.writeSync(encoder.encode(`${line}\n`));
const proxy = startNetProxy(socket, hosts, (event) => say(JSON.stringify(event)));
say("ready");
for await (const _ of Deno.stdin.readable) {
  // Nothing is sent: this only waits for tern to go.
}
await proxy.close();
Deno.exit(0);
