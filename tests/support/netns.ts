/**
 * Recording every host a benchmark run contacts: the benchmark runs inside a network namespace
 * that has only loopback, whose `/etc/resolv.conf` names 127.0.0.1, where a DNS recorder answers
 * every query with "no such name" (at once, so a lookup costs no timeout) and notes it. The
 * model server on 127.0.0.1 sees its own requests; a host named anywhere else shows up here.
 * (A connection to a literal non-loopback IP address fails in the namespace and is not seen.)
 */
import dgram from "node:dgram";

/** Set inside the namespace, so the benchmark does not re-enter it. */
export const INSIDE_ENV = "TERN_BENCH_NETNS";

/** Whether this machine lets us make a network and mount namespace (as root, or mapped to it). */
export function canIsolate(): boolean {
  try {
    return new Deno.Command("unshare", {
      args: ["--net", "--mount", "--map-root-user", "ip", "link", "set", "lo", "up"],
      stdout: "null",
      stderr: "null",
    }).outputSync().success;
  } catch {
    return false;
  }
}

/**
 * Runs `deno run <flags> <script> <args>` inside a fresh network namespace with only loopback
 * and our resolver; returns its exit code. Its output goes to this process's.
 */
export async function runIsolated(flags: string[], script: string, args: string[]) {
  const dir = await Deno.makeTempDir({ prefix: "tern-bench-netns-" });
  try {
    const resolv = `${dir}/resolv.conf`;
    await Deno.writeTextFile(resolv, "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n");
    const line = 'ip link set lo up && mount --bind "$1" /etc/resolv.conf && shift && exec "$@"';
    const status = await new Deno.Command("unshare", {
      args: [
        ...["--net", "--mount", "--map-root-user", "bash", "-c", line, "_", resolv],
        ...[Deno.execPath(), "run", ...flags, script, ...args],
      ],
      // Without DENO_NO_UPDATE_CHECK the benchmark's own Deno would look up its download host
      // in the background, and the lookup would be blamed on whatever run was going on then.
      env: { [INSIDE_ENV]: "1", DENO_NO_UPDATE_CHECK: "1" },
      stdin: "null",
    }).spawn().status;
    return status.code;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A DNS query seen by the recorder: when (`performance.now()`) and the name asked for. */
export interface DnsQuery {
  at: number;
  name: string;
}

/** Starts the DNS recorder on 127.0.0.1:53 (inside the namespace, where we are root). */
export async function startDnsRecorder(): Promise<{ queries: DnsQuery[]; close(): void }> {
  const queries: DnsQuery[] = [];
  const socket = dgram.createSocket("udp4");
  socket.on("message", (packet: Uint8Array, from: { address: string; port: number }) => {
    const { name, end } = question(packet);
    queries.push({ at: performance.now(), name });
    socket.send(noSuchName(packet, end), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(53, "127.0.0.1", resolve));
  return { queries, close: () => socket.close() };
}

/** The name asked for in a DNS query packet (labels from byte 12) and where its question ends. */
export function question(packet: Uint8Array): { name: string; end: number } {
  const labels: string[] = [];
  let at = 12;
  while (at < packet.length && packet[at] !== 0) {
    const length = packet[at];
    labels.push(new TextDecoder().decode(packet.subarray(at + 1, at + 1 + length)));
    at += 1 + length;
  }
  // The root label's zero byte, then QTYPE and QCLASS.
  return { name: labels.join("."), end: Math.min(packet.length, at + 5) };
}

/** The answer "no such name" (NXDOMAIN) to `packet`, whose question ends at `end`. */
export function noSuchName(packet: Uint8Array, end: number): Uint8Array {
  const reply = packet.slice(0, end);
  reply[2] = 0x80 | (packet[2] & 0x79); // a response to the query's opcode, RD as asked
  reply[3] = 0x83; // recursion available; NXDOMAIN
  reply.fill(0, 6, 12); // no answer, authority or additional records
  return reply;
}
