/**
 * Adversarial: what a sandboxed command can reach besides files. Unix sockets of the host (by
 * path or abstract name), descriptors tern inherited, the kernel's surface (modules, mounts,
 * namespaces, keyrings, io_uring, the terminal), and, as root, kernel parameters and root-only
 * host files.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { DENIED_SYSCALLS, hostArch, seccompFilter } from "../../src/sandbox/seccomp.ts";
import { rootOnlyPaths, searchedRoots } from "../../src/sandbox/host_private.ts";
import { homeView } from "../../src/sandbox/home_view.ts";
import { createSandbox } from "../../src/sandbox/runtime.ts";
import { bwrapTest } from "./_bwrap_helpers.ts";
import { withViewBox } from "./_view_box.ts";

const isRoot = Deno.uid() === 0;
if (!isRoot) {
  console.warn("\n!!!!! SKIPPING root-only sandbox cases: tests are not running as root !!!!!\n");
}
const hasPython = await new Deno.Command("python3", { args: ["-c", ""] }).output()
  .then((out) => out.success, () => false);
if (!hasPython) console.warn("\n!!!!! SKIPPING socket cases: python3 is not installed !!!!!\n");

/** Python that connects to the Unix socket at argv[1] (abstract when it starts with "@"). */
const CONNECT = "import socket,sys; p=sys.argv[1]; p='\\0'+p[1:] if p[0]=='@' else p\n" +
  "try:\n s=socket.socket(socket.AF_UNIX); s.connect(p); print('CONNECTED', s.recv(20).decode())\n" +
  "except OSError as e: print('REFUSED', e.errno)";

/**
 * A Unix socket server on the host at `address` (a path, or "@name" for an abstract one) that
 * greets each client; stop it with close().
 */
async function serve(address: string): Promise<{ close(): Promise<void> }> {
  const bind = address.startsWith("@") ? `'\\0${address.slice(1)}'` : JSON.stringify(address);
  const server = new Deno.Command("python3", {
    args: [
      "-c",
      `import socket; s=socket.socket(socket.AF_UNIX); s.bind(${bind}); s.listen(); print('up', flush=True)
while True:
  c,_=s.accept(); c.send(b'HOST-GREETING'); c.close()`,
    ],
    stdout: "piped",
  }).spawn();
  const reader = server.stdout.getReader();
  await reader.read();
  return {
    async close() {
      server.kill();
      reader.releaseLock();
      await server.stdout.cancel().catch(() => {});
      await server.status;
    },
  };
}

bwrapTest(
  "createSandbox() shell: a host Unix socket outside the workspace cannot be connected",
  async () => {
    if (!hasPython) return;
    await withViewBox(async (box) => {
      const path = join(box.root, "engine.sock");
      const listener = await serve(path);
      try {
        const result = await box.run(
          `python3 -c "${CONNECT}" "${path}"; curl -s --unix-socket "${path}" http://x/ ; echo curl=$?`,
        );
        ok(!result.output.includes("HOST-GREETING"), result.output);
        ok(result.output.includes("REFUSED"), result.output);
      } finally {
        await listener.close();
      }
    });
  },
);

bwrapTest(
  "createSandbox() shell: a Unix socket inside the workspace cannot be connected either (no AF_UNIX sockets)",
  async () => {
    if (!hasPython) return;
    await withViewBox(async (box) => {
      const path = join(box.ws, "app.sock");
      const listener = await serve(path);
      try {
        const result = await box.run(`python3 -c "${CONNECT}" app.sock`);
        ok(result.output.includes("REFUSED 13"), result.output);
      } finally {
        await listener.close();
      }
    });
  },
);

bwrapTest(
  "createSandbox() shell: an abstract Unix socket of the host cannot be connected, even with network",
  async () => {
    if (!hasPython) return;
    const name = `tern-test-${crypto.randomUUID()}`;
    // Abstract sockets belong to the network namespace: `:external` shares the host's.
    const listener = await serve(`@${name}`);
    try {
      await withViewBox(async (box) => {
        const result = await box.run(`python3 -c "${CONNECT}" "@${name}"`);
        ok(result.output.includes("REFUSED"), result.output);
        ok(!result.output.includes("HOST-GREETING"), result.output);
      }, { profile: ":external" });
    } finally {
      await listener.close();
    }
  },
);

bwrapTest("createSandbox() shell: socketpair and TCP sockets still work", async () => {
  if (!hasPython) return;
  await withViewBox(async (box) => {
    const result = await box.run(
      `python3 -c "import socket; a,b=socket.socketpair(); a.send(b'x'); print('PAIR', b.recv(1)); socket.socket(); print('INET')"`,
    );
    equal(result.output, "PAIR b'x'\nINET\n");
  });
});

bwrapTest(
  "createSandbox() shell: descriptors tern inherited do not reach the command",
  async () => {
    await withViewBox(async (box) => {
      // A child tern-like process started holding fd 9 on a hidden folder and fd 8 on a file.
      const child = join(box.root, "child.ts");
      await Deno.writeTextFile(
        child,
        `import { createSandbox } from ${
          JSON.stringify(new URL("../../src/sandbox/runtime.ts", import.meta.url).href)
        };
const [ws, home, ternHome] = Deno.args;
const rt = await createSandbox({ workspace: ws, profile: ":workspace", noSandbox: false, home, ternHome,
  env: { PATH: "/usr/bin:/bin", HOME: home }, runId: "fd",
  handlerUrl: new URL(${
          JSON.stringify(new URL("../../src/tools/worker_handler.ts", import.meta.url).href)
        }) });
const r = await rt.shell("ls /proc/self/fd; cat /proc/self/fd/9/.aws/credentials /proc/self/fd/8 <&9; cat <&8", { cwd: ws });
console.log(r.output);
await rt.close();`,
      );
      const script = `exec 9<"${box.home}" 8<"${
        join(box.home, ".netrc")
      }"; exec "${Deno.execPath()}" run -A --config "${
        new URL("../../deno.json", import.meta.url).pathname
      }" "${child}" "${box.ws}" "${box.home}" "${box.ternHome}"`;
      const out = await new Deno.Command("bash", { args: ["-c", script], stderr: "inherit" })
        .output();
      const text = new TextDecoder().decode(out.stdout);
      ok(out.success, text);
      const fds = text.split("\n").filter((line) => /^\d+$/.test(line)).map(Number);
      deepEqual(fds.filter((fd) => fd > 3), [], text);
      ok(!text.includes("PLANTED"), text);
    });
  },
);

const KERNEL_CASES: Record<string, string> = {
  "mount a tmpfs": "mount -t tmpfs none /mnt",
  "unmount the hiding tmpfs": 'umount "$HOME"',
  "a new user namespace": "unshare -U true",
  "a new mount namespace": "unshare -m true",
  "a user namespace through clone": 'python3 -c "import os; os.unshare(os.CLONE_NEWUSER)"',
  "TIOCSTI": "python3 -c \"import fcntl,termios,sys; fcntl.ioctl(0, termios.TIOCSTI, b'x')\"",
};

bwrapTest(
  "createSandbox() shell: the seccomp filter refuses the kernel's risky calls",
  async (t) => {
    await withViewBox(async (box) => {
      for (const [what, command] of Object.entries(KERNEL_CASES)) {
        await t.step(what, async () => {
          // Each case fails closed when refused; `ok` means the call got through.
          const result = await box.run(`if ${command} 2>/dev/null; then echo GOT-THROUGH; fi`);
          equal(result.output, "", `${what}: ${result.output}`);
        });
      }
    });
  },
);

bwrapTest("createSandbox() shell: every call in the filter's table fails with EPERM", async () => {
  if (!hasPython) return;
  const arch = hostArch();
  if (arch === null) return;
  const numbers = DENIED_SYSCALLS.filter((call) => call[arch] >= 0)
    .map((call) => `${call[arch]}:${call.name}`);
  // Bad arguments everywhere: a call that got through fails with EFAULT or EINVAL, not EPERM.
  const script = "import ctypes,sys; l=ctypes.CDLL(None,use_errno=True)\n" +
    "for item in sys.argv[1:]:\n nr,name=item.split(':'); ctypes.set_errno(0)\n" +
    " r=l.syscall(int(nr),-1,-1,-1,-1,-1); e=ctypes.get_errno()\n" +
    " print(name) if not (r==-1 and e==1) else None";
  await withViewBox(async (box) => {
    const result = await box.run(`python3 -c "${script}" ${numbers.join(" ")}`);
    equal(result.output, "", `got through: ${result.output}`);
  });
});

Deno.test("seccompFilter() builds a whole program for each architecture", () => {
  for (const arch of ["x86_64", "aarch64"] as const) {
    const bytes = seccompFilter(arch);
    equal(bytes.length % 8, 0);
    ok(bytes.length / 8 < 4096, "a classic BPF program has at most 4096 instructions");
    // The last instruction allows: RET_K with SECCOMP_RET_ALLOW.
    const view = new DataView(bytes.buffer);
    equal(view.getUint16(bytes.length - 8, true), 0x06);
    equal(view.getUint32(bytes.length - 4, true), 0x7fff0000);
  }
});

Deno.test("rootOnlyPaths() finds files and folders only their owner may read", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern_private_" }));
  try {
    await Deno.chmod(dir, 0o755);
    const path = (name: string) => join(dir, name);
    await Deno.mkdir(path("open/deeper"), { recursive: true });
    await Deno.writeTextFile(path("open/deeper/key"), "k", { mode: 0o600 });
    await Deno.writeTextFile(path("open/public"), "p", { mode: 0o644 });
    await Deno.mkdir(path("closed"), { mode: 0o700 });
    await Deno.writeTextFile(path("closed/inside"), "i", { mode: 0o600 });
    await Deno.chmod(path("open/deeper/key"), 0o600);
    await Deno.chmod(path("closed"), 0o700);
    deepEqual(rootOnlyPaths({ roots: [dir], uid: Deno.uid()!, gid: -1 }), [
      path("closed"),
      path("open/deeper/key"),
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("searchedRoots() searches every top-level folder but the system's programs and what is not on disk", () => {
  const roots = searchedRoots([
    "etc",
    "data",
    "work",
    "usr",
    "proc",
    "tmp",
    "lib64",
    "nix",
    "root",
  ]);
  // A container's own folders (/data, /work) hold people's files as much as /home does.
  deepEqual(roots, ["/data", "/etc", "/root", "/work", "/usr/local/etc"]);
  // Read from the host: every real top-level folder but the listed ones is searched.
  const host = searchedRoots();
  for (const entry of Deno.readDirSync("/")) {
    const path = `/${entry.name}`;
    const skipped = ["/usr", "/proc", "/sys", "/dev", "/run", "/tmp", "/bin", "/sbin", "/lib"];
    if (entry.isSymlink || skipped.includes(path) || path.startsWith("/lib")) continue;
    if (path === "/nix" || path === "/snap") continue;
    ok(host.includes(path), `${path} is not searched`);
  }
});

Deno.test({
  name:
    "createSandbox() shell as root: kernel parameters, /sys and root-only host files stay closed",
  ignore: !isRoot,
  fn: async (t) => {
    await withViewBox(async (box) => {
      const writes: Record<string, string> = {
        "/proc/sys": "echo 1 > /proc/sys/kernel/sysrq || echo 1 > /proc/sys/vm/drop_caches",
        "/proc/sysrq-trigger": "echo h > /proc/sysrq-trigger",
        "/sys": "echo 1 > /sys/kernel/mm/ksm/run || touch /sys/x",
        "/proc/kcore": "head -c1 /proc/kcore >/dev/null",
        "/dev/mem": "head -c1 /dev/mem >/dev/null",
      };
      for (const [what, command] of Object.entries(writes)) {
        await t.step(what, async () => {
          const result = await box.run(`if (${command}) 2>/dev/null; then echo GOT-THROUGH; fi`);
          equal(result.output, "", `${what}: ${result.output}`);
        });
      }
      await t.step("root-only host files", async () => {
        const hostPrivate = rootOnlyPaths().filter((path) => {
          try {
            return Deno.statSync(path).isFile && Deno.statSync(path).size > 0;
          } catch {
            return false;
          }
        });
        for (const path of hostPrivate) {
          const result = await box.run(`head -c 200 "${path}" 2>/dev/null | base64 -w0`);
          equal(result.output, "", `${path} was readable`);
        }
        const shadow = await box.run("cat /etc/shadow /etc/gshadow 2>/dev/null | head -c 100");
        equal(shadow.output, "");
        const rootHome = await box.run("ls -A /root 2>/dev/null");
        equal(rootHome.output, "");
      });
    });
  },
});

Deno.test("homeView() masks the home but never /, and never shows tern's home or the home itself", () => {
  deepEqual(homeView("/", { allow: ["/etc"] }), { masked: [], visible: [] });
  const view = homeView("/h", { allow: ["~/x", "~", "/", "~/.tern/keys"], ternHome: "/h/.tern" });
  deepEqual(view.masked, ["/h"]);
  ok(view.visible.includes("/h/x"));
  ok(view.visible.includes("/h/.cache/pip"));
  ok(
    !view.visible.includes("/h/.cache"),
    "not ~/.cache whole: histories and browser caches live there",
  );
  ok(!view.visible.some((path) => path === "/h" || path === "/" || path.startsWith("/h/.tern")));
});

bwrapTest("createSandbox() keeps the seccomp filter where no command can write it", async () => {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_filter_" }),
  );
  const ws = join(root, "ws");
  await Deno.mkdir(ws);
  const runtime = await createSandbox({
    workspace: ws,
    profile: ":workspace",
    noSandbox: false,
    home: root,
    // tern's home inside the workspace: a command could rewrite a filter kept there.
    ternHome: join(ws, ".tern-home"),
    env: { PATH: "/usr/bin:/bin", HOME: root },
    handlerUrl: new URL("../../src/tools/worker_handler.ts", import.meta.url),
    runId: "filter",
  });
  try {
    const file = runtime.explain().layers?.seccomp.file;
    ok(file, "a filter file");
    ok(!file.startsWith(`${ws}/`), file);
    const result = await runtime.shell(
      `python3 -c "import socket; socket.socket(socket.AF_UNIX)" 2>&1 | tail -1`,
      { cwd: ws },
    );
    ok(result.output.includes("Permission denied"), result.output);
  } finally {
    await runtime.close();
    await Deno.remove(root, { recursive: true });
  }
});
