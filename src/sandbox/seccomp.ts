/**
 * The seccomp filter every sandboxed command runs under, as the classic BPF program bubblewrap
 * takes with `--seccomp FD`, generated here (no libseccomp, no native build) for x86_64 and
 * aarch64. It stops what read-only mounts and dropped capabilities do not: the kernel's own
 * attack surface (modules, kexec, mounts, keyrings, bpf, io_uring) and Unix sockets (host
 * agents, container engines, databases), wherever their files live.
 */

import { join } from "../core/path.ts";

/** One syscall the filter refuses, and why. */
interface Denied {
  name: string;
  x86_64: number;
  aarch64: number;
  why: string;
}

/** Same numbers on both architectures (the unified table from 403 on). */
const both = (name: string, nr: number, why: string): Denied => ({
  name,
  x86_64: nr,
  aarch64: nr,
  why,
});

/** Refused outright with EPERM, whatever the arguments. */
export const DENIED_SYSCALLS: readonly Denied[] = [
  { name: "init_module", x86_64: 175, aarch64: 105, why: "loads a kernel module" },
  { name: "finit_module", x86_64: 313, aarch64: 273, why: "loads a kernel module" },
  { name: "delete_module", x86_64: 176, aarch64: 106, why: "unloads a kernel module" },
  { name: "kexec_load", x86_64: 246, aarch64: 104, why: "replaces the running kernel" },
  { name: "kexec_file_load", x86_64: 320, aarch64: 294, why: "replaces the running kernel" },
  { name: "mount", x86_64: 165, aarch64: 40, why: "could uncover hidden paths" },
  { name: "umount2", x86_64: 166, aarch64: 39, why: "could uncover hidden paths" },
  { name: "pivot_root", x86_64: 155, aarch64: 41, why: "changes the root" },
  both("open_tree", 428, "new mount API"),
  both("move_mount", 429, "new mount API"),
  both("fsopen", 430, "new mount API"),
  both("fsconfig", 431, "new mount API"),
  both("fsmount", 432, "new mount API"),
  both("fspick", 433, "new mount API"),
  both("mount_setattr", 442, "new mount API"),
  both("open_tree_attr", 467, "new mount API"),
  { name: "swapon", x86_64: 167, aarch64: 224, why: "changes the host's swap" },
  { name: "swapoff", x86_64: 168, aarch64: 225, why: "changes the host's swap" },
  { name: "reboot", x86_64: 169, aarch64: 142, why: "reboots the host" },
  { name: "acct", x86_64: 163, aarch64: 89, why: "process accounting of the host" },
  { name: "syslog", x86_64: 103, aarch64: 116, why: "reads the kernel log" },
  { name: "bpf", x86_64: 321, aarch64: 280, why: "kernel programs" },
  { name: "perf_event_open", x86_64: 298, aarch64: 241, why: "kernel attack surface" },
  { name: "userfaultfd", x86_64: 323, aarch64: 282, why: "widens kernel race windows" },
  { name: "keyctl", x86_64: 250, aarch64: 219, why: "kernel keyrings hold others' keys" },
  { name: "add_key", x86_64: 248, aarch64: 217, why: "kernel keyrings" },
  { name: "request_key", x86_64: 249, aarch64: 218, why: "kernel keyrings" },
  {
    name: "open_by_handle_at",
    x86_64: 304,
    aarch64: 265,
    why: "opens files by inode, past every mount",
  },
  {
    name: "name_to_handle_at",
    x86_64: 303,
    aarch64: 264,
    why: "makes handles for open_by_handle_at",
  },
  {
    name: "process_vm_readv",
    x86_64: 310,
    aarch64: 270,
    why: "reads another process's memory",
  },
  {
    name: "process_vm_writev",
    x86_64: 311,
    aarch64: 271,
    why: "writes another process's memory",
  },
  both("io_uring_setup", 425, "io_uring bypasses this filter (it makes sockets itself)"),
  both("io_uring_enter", 426, "io_uring bypasses this filter"),
  both("io_uring_register", 427, "io_uring bypasses this filter"),
  { name: "unshare", x86_64: 272, aarch64: 97, why: "new namespaces regain capabilities" },
  { name: "setns", x86_64: 308, aarch64: 268, why: "enters other namespaces" },
  { name: "iopl", x86_64: 172, aarch64: -1, why: "raw port I/O" },
  { name: "ioperm", x86_64: 173, aarch64: -1, why: "raw port I/O" },
  { name: "uselib", x86_64: 134, aarch64: -1, why: "obsolete loader" },
];

const NR = {
  socket: { x86_64: 41, aarch64: 198 },
  clone: { x86_64: 56, aarch64: 220 },
  clone3: { x86_64: 435, aarch64: 435 },
  ptrace: { x86_64: 101, aarch64: 117 },
  ioctl: { x86_64: 16, aarch64: 29 },
  openat2: { x86_64: 437, aarch64: 437 },
} as const;

/**
 * Calls that create a file or set its mode, with the index of their mode argument (-1 where
 * the architecture has no such call): none may set the set-user-ID or set-group-ID bit.
 */
const MODE_SETTERS: ReadonlyArray<{ name: string; x86_64: number; aarch64: number; mode: number }> =
  [
    { name: "open", x86_64: 2, aarch64: -1, mode: 2 },
    { name: "creat", x86_64: 85, aarch64: -1, mode: 1 },
    { name: "openat", x86_64: 257, aarch64: 56, mode: 3 },
    { name: "chmod", x86_64: 90, aarch64: -1, mode: 1 },
    { name: "fchmod", x86_64: 91, aarch64: 52, mode: 1 },
    { name: "fchmodat", x86_64: 268, aarch64: 53, mode: 2 },
    { name: "fchmodat2", x86_64: 452, aarch64: 452, mode: 2 },
    { name: "mknod", x86_64: 133, aarch64: -1, mode: 1 },
    { name: "mknodat", x86_64: 259, aarch64: 33, mode: 2 },
  ];

/** The architectures the filter is built for, with their `AUDIT_ARCH_*` values. */
export const ARCHES = { x86_64: 0xc000003e, aarch64: 0xc00000b7 } as const;
export type Arch = keyof typeof ARCHES;

/**
 * The socket families a command may open: IP and netlink (what `ip`, resolvers and address
 * lookups use). Every other family is refused: Unix sockets reach the host's agents, and
 * families no network namespace contains (`AF_VSOCK` reaches the hypervisor of a VM, WSL's
 * Windows side) would be a way out under a profile without the network.
 */
const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;
const EPERM = 1;
const EACCES = 13;
const ENOSYS = 38;
/** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET. */
const CLONE_NAMESPACES = 0x7e020000;
const PTRACE_ATTACH = 16;
const PTRACE_SEIZE = 0x4206;
/**
 * Terminal ioctls refused on every descriptor: `TIOCSTI` pushes bytes into a terminal's input
 * and `TIOCLINUX` pastes a virtual console's selection into it (a command could type into the
 * person's shell); `TIOCSETD` attaches a line discipline, kernel code (`n_gsm`, `n_hdlc`) with a
 * history of exploits, to a terminal a command opens itself (`/dev/ptmx`). The request is 32
 * bits wide in the kernel, so the filter compares the argument's low word only.
 */
const TERMINAL_IOCTLS = { TIOCSTI: 0x5412, TIOCLINUX: 0x541c, TIOCSETD: 0x5423 } as const;
/**
 * S_ISUID | S_ISGID. Commands run as the person's user, often root: a set-ID program left in
 * the workspace would run as that user for anyone who starts it on the host.
 */
const SET_ID_BITS = 0o6000;
/** x32 system calls on x86_64 carry this bit; none are allowed. */
const X32_BIT = 0x40000000;

const RET_ALLOW = 0x7fff0000;
const RET_KILL_PROCESS = 0x80000000;
const retErrno = (errno: number) => 0x00050000 | errno;

// Classic BPF opcodes.
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;
const JA = 0x05;

/** Offsets in `struct seccomp_data` (little-endian: an argument's low word comes first). */
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
const argOffset = (index: number) => 16 + 8 * index;

type Instruction = [code: number, jt: number, jf: number, k: number];

/**
 * The filter for `arch` as bytes (`struct sock_filter[]`, 8 bytes each, little-endian), for
 * bubblewrap's `--seccomp FD`:
 * - another architecture's calls (i386 on x86_64, arm32 on aarch64) kill the process, and x32
 *   calls get EPERM: their numbers would slip past the table;
 * - every call in {@linkcode DENIED_SYSCALLS} gets EPERM;
 * - `socket()` of any family but IPv4, IPv6 and netlink gets EACCES: a command cannot connect
 *   to any Unix socket by path (seccomp cannot see paths), nor to an abstract one, nor reach
 *   the host past its network namespace (`AF_VSOCK`); `socketpair` stays allowed, so pipes
 *   between a program's own processes work;
 * - `clone` with a namespace flag gets EPERM and `clone3` ENOSYS (its flags sit behind a
 *   pointer; C libraries then fall back to `clone`);
 * - `ptrace` ATTACH and SEIZE get EPERM (a child may still ask to be traced: debuggers that
 *   start their program work), and `ioctl` with a request of `TERMINAL_IOCTLS` (`TIOCSTI`,
 *   `TIOCLINUX`, `TIOCSETD`) gets EPERM;
 * - creating a file or changing a mode with the set-user-ID or set-group-ID bit (`open`,
 *   `openat`, `creat`, `mknod*`, `chmod`, `fchmod*`) gets EPERM, and `openat2` ENOSYS (its mode
 *   sits behind a pointer).
 */
export function seccompFilter(arch: Arch): Uint8Array {
  const program: Instruction[] = [
    [LD_W_ABS, 0, 0, ARCH_OFFSET],
    [JEQ_K, 1, 0, ARCHES[arch]],
    [RET_K, 0, 0, RET_KILL_PROCESS],
    [LD_W_ABS, 0, 0, NR_OFFSET],
  ];
  const deny = (nr: number, errno: number) => {
    program.push([JEQ_K, 0, 1, nr], [RET_K, 0, 0, retErrno(errno)]);
  };
  if (arch === "x86_64") program.push([JGE_K, 0, 1, X32_BIT], [RET_K, 0, 0, retErrno(EPERM)]);
  for (const call of DENIED_SYSCALLS) if (call[arch] >= 0) deny(call[arch], EPERM);
  deny(NR.clone3[arch], ENOSYS);
  // Its mode sits behind a pointer, as clone3's flags; C libraries open with openat.
  deny(NR.openat2[arch], ENOSYS);
  // If the number is `nr`: load argument `arg`; any test true → errno; else reload the number.
  const argCheck = (nr: number, arg: number, tests: Array<[number, number]>, errno: number) => {
    const n = tests.length;
    program.push([JEQ_K, 0, n + 4, nr], [LD_W_ABS, 0, 0, argOffset(arg)]);
    tests.forEach(([op, k], j) => program.push([op, n - j, 0, k]));
    program.push([JA, 0, 0, 1], [RET_K, 0, 0, retErrno(errno)], [LD_W_ABS, 0, 0, NR_OFFSET]);
  };
  // socket(): a listed family reloads the number and goes on, any other → EACCES.
  const families = [AF_INET, AF_INET6, AF_NETLINK];
  const n = families.length;
  program.push([JEQ_K, 0, n + 3, NR.socket[arch]], [LD_W_ABS, 0, 0, argOffset(0)]);
  families.forEach((family, j) => program.push([JEQ_K, n - j, 0, family]));
  program.push([RET_K, 0, 0, retErrno(EACCES)], [LD_W_ABS, 0, 0, NR_OFFSET]);
  argCheck(NR.clone[arch], 0, [[JSET_K, CLONE_NAMESPACES]], EPERM);
  argCheck(NR.ptrace[arch], 0, [[JEQ_K, PTRACE_ATTACH], [JEQ_K, PTRACE_SEIZE]], EPERM);
  const ioctls = Object.values(TERMINAL_IOCTLS).map((k): [number, number] => [JEQ_K, k]);
  argCheck(NR.ioctl[arch], 1, ioctls, EPERM);
  for (const call of MODE_SETTERS) {
    if (call[arch] >= 0) argCheck(call[arch], call.mode, [[JSET_K, SET_ID_BITS]], EPERM);
  }
  program.push([RET_K, 0, 0, RET_ALLOW]);
  return encode(program);
}

function encode(program: readonly Instruction[]): Uint8Array {
  const bytes = new Uint8Array(program.length * 8);
  const view = new DataView(bytes.buffer);
  program.forEach(([code, jt, jf, k], i) => {
    view.setUint16(i * 8, code, true);
    view.setUint8(i * 8 + 2, jt);
    view.setUint8(i * 8 + 3, jf);
    view.setUint32(i * 8 + 4, k >>> 0, true);
  });
  return bytes;
}

/** This machine's architecture as the filter names it, or null where tern has no filter. */
export function hostArch(): Arch | null {
  return Deno.build.arch === "x86_64" ? "x86_64" : Deno.build.arch === "aarch64" ? "aarch64" : null;
}

/**
 * The path of this machine's filter file in `dir` (tern's home), written when missing or
 * different (atomically: a temporary file renamed into place). Null where tern has no filter
 * for the architecture or the file cannot be written (then commands run without one: `tern
 * doctor` says so). The file's name carries a hash of its bytes, so tern versions with other
 * filters do not overwrite each other's.
 */
export async function seccompFile(dir: string): Promise<string | null> {
  const arch = hostArch();
  if (arch === null) return null;
  const bytes = seccompFilter(arch);
  const path = join(dir, `seccomp-${arch}-${fnv1a(bytes)}.bpf`);
  try {
    const current = await Deno.readFile(path);
    if (current.length === bytes.length && current.every((byte, i) => byte === bytes[i])) {
      return path;
    }
  } catch {
    // Not written yet.
  }
  try {
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    const temporary = `${path}.${crypto.randomUUID()}.tmp`;
    await Deno.writeFile(temporary, bytes, { mode: 0o600 });
    await Deno.rename(temporary, path);
    return path;
  } catch {
    return null;
  }
}

function fnv1a(bytes: Uint8Array): string {
  let hash = 0x811c9dc5;
  for (const byte of bytes) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, "0");
}

/**
 * What the filter refuses, as short names for `tern sandbox explain` and `tern doctor`: each
 * refused call plus the argument checks (`socket(AF_UNIX)`, `clone(namespaces)`, ...).
 */
export function refusedCalls(): string[] {
  return [
    ...DENIED_SYSCALLS.map((call) => call.name),
    "clone3",
    "socket(AF_UNIX)",
    "socket(AF_VSOCK and every family but AF_INET, AF_INET6, AF_NETLINK)",
    "clone(new namespaces)",
    "ptrace(ATTACH|SEIZE)",
    `ioctl(${Object.keys(TERMINAL_IOCTLS).join(", ")})`,
    "set-ID bits (chmod, open, mknod)",
    "openat2",
    "other architectures' calls",
  ];
}
