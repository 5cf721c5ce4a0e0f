/**
 * Shell commands with host grants: each runs with a filtering proxy of its own (see
 * `net_proxy.ts`) that its forwarder reaches from inside the command's network namespace, the
 * proxy variables pointing at it, and the hosts it reached reported with its result.
 */
import { hostProgram, hostProgramOr } from "../core/host_programs.ts";
import { join } from "../core/path.ts";
import { forwarderArgv, proxyArgv, type ProxyEvent } from "./net_proxy.ts";
import { cgroupJoin } from "./limits.ts";
import type { GrantList, ShellPlan, ShellResult } from "./types.ts";

/** The port the forwarder listens on in each command's loopback (a namespace of its own). */
export const PROXY_PORT = 3128;

/**
 * The hosts a command reaches through the proxy under `net`: the granted list, or null when
 * no proxy is needed (nothing granted: no network at all; `"all"`: the host network).
 */
export function proxiedHosts(net: GrantList): readonly string[] | null {
  return net === "all" || net.length === 0 ? null : net;
}

/**
 * The proxy variables of a command whose forwarder listens on `port`, in upper and lower case
 * (curl reads only lower-case `http_proxy`), with the command's own loopback left direct
 * (`NO_PROXY`) except a loopback address among `hosts`: a grant of the host's
 * `127.0.0.1:8080` is reached through the proxy, the namespace's own loopback has no such
 * server.
 */
export function proxyEnv(hosts: readonly string[], port = PROXY_PORT): Record<string, string> {
  const url = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {};
  for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"]) {
    env[name] = url;
    env[name.toLowerCase()] = url;
  }
  const granted = new Set(hosts.map((entry) => entry.replace(/^\[([^\]]*)\].*$|:\d+$/, "$1")));
  const direct = ["localhost", "127.0.0.1", "::1"].filter((host) => !granted.has(host));
  env.NO_PROXY = env.no_proxy = direct.join(",");
  return env;
}

/**
 * `plan` for a command whose proxy for `hosts` listens on `socket`: its own network namespace,
 * the forwarder to start in it, and the proxy variables.
 */
export function withProxy(
  plan: ShellPlan,
  hosts: readonly string[],
  socket: string,
  denoPath?: string,
): ShellPlan {
  return {
    ...plan,
    network: false,
    proxy: {
      port: PROXY_PORT,
      forwarder: forwarderArgv(socket, PROXY_PORT, denoPath, hostProgramOr("env")),
    },
    env: { ...plan.env, ...proxyEnv(hosts, PROXY_PORT) },
  };
}

/** Options for {@linkcode runProxied}. */
export interface ProxiedRunOptions {
  /** A folder private to tern (never visible to commands) for the proxy's Unix socket. */
  socketDir: string;
  /** A name for the socket unique in `socketDir`. */
  name: string;
  /** The deno executable that runs the forwarder; default `Deno.execPath()`. */
  denoPath?: string;
}

/**
 * Runs `run` with `plan` extended by a proxy for `hosts` (its forwarder and variables), then
 * stops the proxy and reports in `net` the hosts it connected the command to and those it
 * refused. The proxy (a Deno process, `proxyArgv`) starts beside the command; the forwarder
 * waits for its socket. Throws what `run` throws, or when Deno cannot be started.
 */
export async function runProxied(
  plan: ShellPlan,
  hosts: readonly string[],
  run: (plan: ShellPlan) => Promise<ShellResult>,
  options: ProxiedRunOptions,
): Promise<ShellResult> {
  const socket = join(options.socketDir, `${options.name}.sock`);
  const argv = proxyArgv(socket, hosts, options.denoPath);
  // The proxy holds what the command sends through it (connections, request heads): it starts
  // in the run's cgroups, so the run's memory cap holds it too.
  const joins = cgroupJoin(plan.cgroupFiles ?? []);
  const [program, ...args] = joins === ""
    ? argv
    : [hostProgram("bash"), "-c", `${joins}exec "$@"`, "tern-proxy", ...argv];
  const proxy = new Deno.Command(program, {
    args,
    cwd: "/",
    // Deno's own update check would connect from the host: not for the proxy.
    env: {
      PATH: plan.env.PATH ?? "/usr/bin:/bin",
      DENO_NO_UPDATE_CHECK: "1",
      DENO_NO_PACKAGE_JSON: "1",
    },
    clearEnv: true,
    // Its stdin stays open while tern lives: when tern dies, the proxy ends (see its script).
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const connected = new Set<string>();
  const refused = new Set<string>();
  const reading = readEvents(proxy.stdout, (event) => {
    (event.kind === "connected" ? connected : refused).add(event.host);
  });
  try {
    const result = await run(withProxy(plan, hosts, socket, options.denoPath));
    return { ...result, net: { connected: [...connected], refused: [...refused] } };
  } finally {
    try {
      proxy.kill("SIGKILL");
    } catch {
      // Ended already.
    }
    await proxy.stdin.close().catch(() => {});
    await proxy.status;
    await reading;
    await Deno.remove(socket).catch(() => {});
  }
}

/** Calls `onEvent` with each event line of the proxy's output; never throws. */
async function readEvents(
  stream: ReadableStream<Uint8Array>,
  onEvent: (event: ProxyEvent) => void,
): Promise<void> {
  let rest = "";
  try {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      const lines = (rest + text).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        if (!line.startsWith("{")) continue;
        try {
          onEvent(JSON.parse(line));
        } catch {
          // Not an event.
        }
      }
    }
  } catch {
    // The proxy was killed mid-line.
  }
}
