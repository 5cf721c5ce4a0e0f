/**
 * The forwarder of a command with host grants: started by the launcher (see `launchArgv`)
 * inside the command's network namespace but outside its sandbox (so outside the seccomp
 * filter that refuses Unix sockets), it listens on `127.0.0.1:<port>` there and relays each
 * connection, byte for byte, to tern's filtering proxy on the Unix socket `<socket>`. It knows
 * nothing about hosts: the proxy decides. It ends when the socket is gone (the proxy removes it
 * when it stops, even when tern died), or with the launcher's process group. Run as
 * `deno run --allow-net=127.0.0.1:<port>,unix:<socket> --allow-read=<socket> --allow-write=<socket>
 * net_forwarder.ts <port> <socket>`.
 */
import { entryArgs } from "../core/packaging.ts";

/** The proxy starts beside the command: its socket may not be there yet for a moment. */
const CONNECT_TRIES = 500;
const [port, socket] = entryArgs();
const listener = Deno.listen({ hostname: "127.0.0.1", port: Number(port) });
/** How often the forwarder checks that its proxy is still there, in milliseconds. */
const CHECK_MS = 1000;
let seen = false;
setInterval(() => {
  try {
    Deno.lstatSync(socket);
    seen = true;
  } catch {
    // Not made yet (the proxy is starting), or removed: the proxy stopped.
    if (seen) Deno.exit(0);
  }
}, CHECK_MS);
for await (const conn of listener) relay(conn);

async function relay(conn: Deno.Conn): Promise<void> {
  let upstream: Deno.UnixConn | undefined;
  for (let i = 0; upstream === undefined && i < CONNECT_TRIES; i++) {
    try {
      upstream = await Deno.connect({ transport: "unix", path: socket });
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  if (upstream === undefined) {
    conn.close();
    return;
  }
  await Promise.allSettled([
    conn.readable.pipeTo(upstream.writable),
    upstream.readable.pipeTo(conn.writable),
  ]);
}
