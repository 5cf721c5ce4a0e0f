/**
 * Adversarial: socket families that no network namespace contains. A command under a profile
 * without the network has only its own loopback; `AF_VSOCK` (a VM's channel to its hypervisor,
 * WSL's to Windows) and the other non-IP families would be a way past it.
 */
import { equal } from "node:assert/strict";
import { bwrapTest } from "./_bwrap_helpers.ts";
import { withViewBox } from "./_view_box.ts";

const hasPython = await new Deno.Command("python3", { args: ["-c", ""] }).output()
  .then((out) => out.success, () => false);
if (!hasPython) {
  console.warn("\n!!!!! SKIPPING socket family cases: python3 is not installed !!!!!\n");
}

/**
 * Python that calls socket(family, type, 0) for every family 0..45 and both stream and
 * datagram types, and prints each family whose calls did not all fail with EACCES (13), with
 * what they got: whether the kernel supports a family or not, the filter answers first.
 */
const FAMILIES = "import ctypes; l=ctypes.CDLL(None,use_errno=True)\n" +
  "for fam in range(46):\n" +
  " got=set()\n" +
  " for kind in (1,2,5):\n" +
  "  ctypes.set_errno(0); fd=l.socket(fam,kind,0); got.add(ctypes.get_errno() if fd<0 else 'open')\n" +
  "  l.close(fd) if fd>=0 else None\n" +
  " print(fam, sorted(map(str,got))) if got!={13} else None";

for (const profile of [":read-only", ":workspace", ":external"]) {
  bwrapTest(
    `createSandbox() shell (${profile}): every socket family but IPv4, IPv6 and netlink is refused (AF_VSOCK reaches the hypervisor past the network namespace)`,
    async () => {
      if (!hasPython) return;
      await withViewBox(async (box) => {
        const result = await box.run(`python3 -c "${FAMILIES}"`);
        const opened = result.output.trim().split("\n").map((line) => line.split(" ")[0]);
        // 2 AF_INET, 10 AF_INET6, 16 AF_NETLINK: not refused by the filter (they open, or
        // the kernel says no to a type). Every other family, AF_VSOCK (40) among them, is.
        equal(opened.join(","), "2,10,16", result.output);
      }, { profile });
    },
  );
}
