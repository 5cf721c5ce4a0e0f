/**
 * Adversarial: a sandboxed command that gets hold of a terminal. The sandbox gives it none
 * (stdin `/dev/null`, a new session), but it can make its own (`/dev/ptmx`) and make it its
 * controlling terminal, where the kernel itself would let `TIOCSTI` through. The filter must
 * refuse the terminal ioctls that type into a terminal or load kernel code, whatever the
 * descriptor, and also when the request number carries bits the kernel ignores.
 */
import { equal } from "node:assert/strict";
import { refusedCalls } from "../../src/sandbox/seccomp.ts";
import { bwrapTest } from "./_bwrap_helpers.ts";
import { withViewBox } from "./_view_box.ts";

const hasPython = await new Deno.Command("python3", { args: ["-c", ""] }).output()
  .then((out) => out.success, () => false);
if (!hasPython) console.warn("\n!!!!! SKIPPING terminal cases: python3 is not installed !!!!!\n");

/** ioctl requests, by name, and a valid argument for each. */
const REQUESTS: Record<string, [request: string, arg: string]> = {
  // Types a byte into the terminal's input.
  TIOCSTI: ["0x5412", "b'x'"],
  // The same, with high bits the kernel drops (ioctl's request is 32 bits wide).
  "TIOCSTI with high bits": ["0x100005412", "b'x'"],
  // Subcode 3 pastes the console selection into the input (on a virtual console).
  TIOCLINUX: ["0x541C", "bytes([3])"],
  // Line disciplines (n_gsm, n_hdlc) are kernel code with a history of exploits.
  TIOCSETD: ["0x5423", "(0).to_bytes(4, 'little')"],
};

/**
 * Python that opens a pseudo-terminal of its own, makes it its controlling terminal in a child
 * (`pty.fork`: a new session, then `TIOCSCTTY`), and prints `<name> <errno>` for each request on
 * it (0 when the call got through), then the same on `/dev/null`.
 */
function probe(): string {
  const calls = Object.entries(REQUESTS).map(([name, [request, arg]]) =>
    `  try: fcntl.ioctl(fd, ${request}, ${arg}); print(${JSON.stringify(name)}, where, 0)\n` +
    `  except OSError as e: print(${JSON.stringify(name)}, where, e.errno)\n`
  ).join("");
  return "import fcntl,os,pty,sys\n" +
    "def each(fd, where):\n" + calls +
    "pid, master = pty.fork()\n" +
    "if pid == 0:\n" +
    "  each(0, 'tty'); each(os.open('/dev/null', os.O_RDWR), 'null'); sys.stdout.flush(); os._exit(0)\n" +
    "out = b''\n" +
    "while True:\n" +
    "  try: chunk = os.read(master, 4096)\n" +
    "  except OSError: break\n" +
    "  if not chunk: break\n" +
    "  out += chunk\n" +
    "os.waitpid(pid, 0); sys.stdout.write(out.decode().replace('\\r', ''))\n";
}

bwrapTest(
  "createSandbox() shell: terminal ioctls that type into a terminal are refused on any descriptor",
  async () => {
    if (!hasPython) return;
    await withViewBox(async (box) => {
      await Deno.writeTextFile(`${box.ws}/probe.py`, probe());
      const result = await box.run("python3 probe.py");
      const expected = ["tty", "null"].flatMap((where) =>
        Object.keys(REQUESTS).map((name) => `${name} ${where} 1`)
      );
      // EPERM (1) from the filter for each: the kernel alone would allow TIOCSTI on the
      // command's own controlling terminal and answer ENOTTY (25) elsewhere.
      equal(result.output.trim(), expected.join("\n"), result.output);
    });
  },
);

Deno.test("refusedCalls() names each terminal ioctl the filter refuses", () => {
  equal(
    refusedCalls().includes("ioctl(TIOCSTI, TIOCLINUX, TIOCSETD)"),
    true,
    refusedCalls().join(", "),
  );
});
