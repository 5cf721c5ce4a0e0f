/**
 * Which network addresses the web tools may connect to: public unicast only. Every address a
 * host resolves to is checked here, before the connection is made to that same address.
 *
 * Refused: loopback, private, shared (CGNAT), link-local, unique-local, site-local,
 * unspecified, multicast, broadcast and reserved ranges, documentation and benchmark ranges,
 * and IPv6 forms that embed an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4,
 * Teredo) when the embedded address is refused; IPv6 outside global unicast (2000::/3) is
 * refused whole. Cloud metadata addresses fall in these ranges (169.254.169.254 is
 * link-local, fd00:ec2::254 unique-local); their names are refused by {@linkcode blockedHostName}.
 */
import { isIPv4, isIPv6 } from "node:net";

type Range = readonly [bytes: readonly number[], prefix: number, why: string];

const V4_BLOCKED: readonly Range[] = [
  [[0, 0, 0, 0], 8, "unspecified (0.0.0.0/8)"],
  [[10, 0, 0, 0], 8, "private (10.0.0.0/8)"],
  [[100, 64, 0, 0], 10, "shared address space (100.64.0.0/10)"],
  [[127, 0, 0, 0], 8, "loopback (127.0.0.0/8)"],
  [[169, 254, 0, 0], 16, "link-local, cloud metadata (169.254.0.0/16)"],
  [[172, 16, 0, 0], 12, "private (172.16.0.0/12)"],
  [[192, 0, 0, 0], 24, "IETF protocol assignments (192.0.0.0/24)"],
  [[192, 0, 2, 0], 24, "documentation (192.0.2.0/24)"],
  [[192, 88, 99, 0], 24, "6to4 relay anycast (192.88.99.0/24)"],
  [[192, 168, 0, 0], 16, "private (192.168.0.0/16)"],
  // Public by its range, yet answered only inside Azure, by the host: the VM's platform
  // configuration (WireServer, and the guest agent plugin on port 32526).
  [[168, 63, 129, 16], 32, "Azure platform endpoint (168.63.129.16)"],
  [[198, 18, 0, 0], 15, "benchmarking (198.18.0.0/15)"],
  [[198, 51, 100, 0], 24, "documentation (198.51.100.0/24)"],
  [[203, 0, 113, 0], 24, "documentation (203.0.113.0/24)"],
  [[224, 0, 0, 0], 4, "multicast (224.0.0.0/4)"],
  [[240, 0, 0, 0], 4, "reserved or broadcast (240.0.0.0/4)"],
];

/** IPv6 ranges inside 2000::/3 that are not public (everything outside 2000::/3 is refused). */
const V6_BLOCKED: readonly Range[] = [
  [[0x20, 0x01, 0x0d, 0xb8], 32, "documentation (2001:db8::/32)"],
  [[0x20, 0x01, 0x00, 0x10], 28, "ORCHID (2001:10::/28)"],
  [[0x20, 0x01, 0x00, 0x20], 28, "ORCHIDv2 (2001:20::/28)"],
  [[0x20, 0x01, 0x00, 0x02, 0, 0], 48, "benchmarking (2001:2::/48)"],
  [[0x3f, 0xff], 20, "documentation (3fff::/20)"],
];

/**
 * Why `address` (an IP literal, without brackets or zone) must not be connected to, or
 * undefined when it is a public unicast address. Anything that is not a valid IP is refused.
 */
export function blockedAddress(address: string): string | undefined {
  if (isIPv4(address)) return blockedV4(address.split(".").map(Number));
  if (isIPv6(address)) {
    const bytes = parseIpv6(address);
    return bytes === undefined ? `"${address}" is not an IP address` : blockedV6(bytes);
  }
  return `"${address}" is not an IP address`;
}

function blockedV4(bytes: readonly number[]): string | undefined {
  return V4_BLOCKED.find(([base, prefix]) => inRange(bytes, base, prefix))?.[2];
}

function blockedV6(bytes: readonly number[]): string | undefined {
  const v4 = (from: number) => bytes.slice(from, from + 4);
  const zero = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  const embedded = (what: string, inner: readonly number[]) => {
    const why = blockedV4(inner);
    return why === undefined ? undefined : `${what} of ${inner.join(".")}, ${why}`;
  };
  if (zero(0, 16)) return "unspecified (::)";
  if (zero(0, 15) && bytes[15] === 1) return "loopback (::1)";
  if (zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return embedded("IPv4-mapped", v4(12)) ?? undefined;
  }
  if (zero(0, 12)) return embedded("IPv4-compatible", v4(12)) ?? "IPv4-compatible (::/96)";
  if (startsWith(bytes, [0, 0x64, 0xff, 0x9b]) && zero(4, 12)) {
    return embedded("NAT64", v4(12)) ?? undefined;
  }
  if (startsWith(bytes, [0, 0x64, 0xff, 0x9b, 0, 1])) return "local-use NAT64 (64:ff9b:1::/48)";
  if (startsWith(bytes, [0x20, 0x02])) return embedded("6to4", v4(2));
  if (startsWith(bytes, [0x20, 0x01, 0, 0])) {
    // Teredo: the server's IPv4 follows the prefix, the client's is the last 32 bits inverted.
    const client = v4(12).map((b) => b ^ 0xff);
    return embedded("Teredo server", v4(4)) ?? embedded("Teredo client", client) ??
      "Teredo (2001::/32)";
  }
  if ((bytes[0] & 0xe0) !== 0x20) return notGlobalV6(bytes);
  return V6_BLOCKED.find(([base, prefix]) => inRange(bytes, base, prefix))?.[2];
}

function notGlobalV6(bytes: readonly number[]): string {
  if ((bytes[0] & 0xfe) === 0xfc) return "unique-local, e.g. cloud metadata (fc00::/7)";
  if (bytes[0] === 0xfe && (bytes[1] & 0xc0) === 0x80) return "link-local (fe80::/10)";
  if (bytes[0] === 0xfe && (bytes[1] & 0xc0) === 0xc0) return "site-local (fec0::/10)";
  if (bytes[0] === 0xff) return "multicast (ff00::/8)";
  return "not global unicast (outside 2000::/3)";
}

function startsWith(bytes: readonly number[], head: readonly number[]): boolean {
  return head.every((b, i) => bytes[i] === b);
}

function inRange(bytes: readonly number[], base: readonly number[], prefix: number): boolean {
  for (let bit = 0; bit < prefix; bit++) {
    const byte = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if (((bytes[byte] ?? 0) & mask) !== ((base[byte] ?? 0) & mask)) return false;
  }
  return true;
}

/**
 * Whether `address` (an IP literal) reaches one of `own` (this machine's addresses): a public
 * address of its own interface is loopback by another name, where a dev server bound to every
 * interface answers. IPv6 forms that carry an IPv4 (mapped, compatible, NAT64, 6to4, Teredo)
 * reach that IPv4 too.
 */
export function isOwnAddress(address: string, own: readonly string[]): boolean {
  const mine = new Set(own.flatMap(addressKeys));
  return addressKeys(address).some((key) => mine.has(key));
}

/** The addresses `address` names, as byte strings: itself, and an IPv4 an IPv6 form carries. */
function addressKeys(address: string): string[] {
  const bare = address.split("%")[0];
  if (isIPv4(bare)) return [`4:${bare.split(".").map(Number).join(".")}`];
  const bytes = isIPv6(bare) ? parseIpv6(bare) : undefined;
  if (bytes === undefined) return [];
  const v4 = (from: number) => `4:${bytes.slice(from, from + 4).join(".")}`;
  const zero = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  const keys = [`6:${bytes.join(".")}`];
  if (zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) keys.push(v4(12));
  else if (zero(0, 12)) keys.push(v4(12));
  else if (startsWith(bytes, [0, 0x64, 0xff, 0x9b]) && zero(4, 12)) keys.push(v4(12));
  else if (startsWith(bytes, [0x20, 0x02])) keys.push(v4(2));
  else if (startsWith(bytes, [0x20, 0x01, 0, 0])) {
    keys.push(v4(4), `4:${bytes.slice(12, 16).map((b) => b ^ 0xff).join(".")}`);
  }
  return keys;
}

/** The 16 bytes of a valid IPv6 literal (`::`, embedded dotted IPv4); undefined if malformed. */
export function parseIpv6(address: string): number[] | undefined {
  if (address.includes("%")) return undefined;
  let text = address;
  const tail: number[] = [];
  const dotted = text.match(/:(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) {
    if (!isIPv4(dotted[1])) return undefined;
    const [a, b, c, d] = dotted[1].split(".").map(Number);
    text = `${text.slice(0, dotted.index! + 1)}${((a << 8) | b).toString(16)}:${
      ((c << 8) | d).toString(16)
    }`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groups = (part: string) => part === "" ? [] : part.split(":");
  const head = groups(halves[0]);
  const rest = halves.length === 2 ? groups(halves[1]) : [];
  const fill = 8 - head.length - rest.length;
  if (halves.length === 1 ? fill !== 0 : fill < 1) return undefined;
  const words = [...head, ...Array(halves.length === 2 ? fill : 0).fill("0"), ...rest];
  for (const word of words) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(word)) return undefined;
    const value = parseInt(word, 16);
    tail.push(value >> 8, value & 0xff);
  }
  return tail;
}

/** Cloud metadata services' names, some of which resolve to public addresses. */
const METADATA_NAMES: ReadonlySet<string> = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "metadata.platformequinix.com",
  "metadata.packet.net",
  "metadata.tencentyun.com",
]);

/**
 * Host names refused before any lookup: `localhost` and its subdomains, cloud metadata names,
 * and names under `.internal`, `.local`, `.localhost` and `.home.arpa`, which only mean
 * something inside a private network. Undefined when the name may be looked up.
 */
export function blockedHostName(host: string): string | undefined {
  const name = host.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return "a loopback name";
  if (METADATA_NAMES.has(name)) return "a cloud metadata name";
  for (const suffix of [".internal", ".local", ".home.arpa", ".lan", ".intranet"]) {
    if (name.endsWith(suffix)) return `a private name (*${suffix})`;
  }
  return undefined;
}
