/**
 * Adversarial shell commands against real bubblewrap: network without a network grant, and
 * host Unix sockets (agents, docker). Each test also checks (attackTest) that nothing outside
 * the writable roots changed and that no process is left.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { secretLocations } from "../../src/sandbox/protected_paths.ts";
import { type Attack, attackTest } from "./_bwrap_helpers.ts";

/** A server the test can ask how many requests it answered. */
interface Server {
  port: number;
  hits: () => Promise<number>;
}

/** An HTTP server on 127.0.0.1 that counts its requests. */
async function withServer(fn: (server: Server) => Promise<void>): Promise<void> {
  let hits = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    hits++;
    return new Response("hello from the host\n");
  });
  try {
    await fn({ port: server.addr.port, hits: () => Promise.resolve(hits) });
  } finally {
    await server.shutdown();
  }
}

/** Serves HTTP on a Unix socket (the test itself may not: --allow-net covers 127.0.0.1 only). */
const SOCKET_SERVER = `
let hits = 0;
Deno.serve({ path: Deno.args[0], onListen() { console.log("ready"); } }, () => {
  hits++;
  return new Response("hello from the host\\n");
});
for await (const _ of Deno.stdin.readable) console.log(hits);
`;

/** An HTTP server on the Unix socket `path`, in a child process; `hits()` asks it. */
async function withSocketServer(path: string, fn: (server: Server) => Promise<void>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-prompt", SOCKET_SERVER.replace("Deno.args[0]", JSON.stringify(path))],
    env: { NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const writer = child.stdin.getWriter();
  const nextLine = async () => (await lines.read()).value?.trim() ?? "";
  try {
    equal(await nextLine(), "ready");
    await fn({
      port: 0,
      hits: async () => {
        await writer.write(new TextEncoder().encode("?\n"));
        return Number(await nextLine());
      },
    });
  } finally {
    child.kill("SIGKILL");
    await child.status;
    await lines.cancel();
    await writer.abort().catch(() => {});
    await Deno.remove(path).catch(() => {});
  }
}

attackTest("bwrap runner without network cannot reach a host server with curl", async (a) => {
  await withServer(async ({ port, hits }) => {
    const result = await a.run(`curl -sS -m 5 http://127.0.0.1:${port}/`);
    equal(result.code, 7, result.output);
    ok(/Failed to connect|Couldn't connect/.test(result.output), result.output);
    equal(await hits(), 0);
  });
});

attackTest("bwrap runner without network cannot open /dev/tcp", async (a) => {
  await withServer(async ({ port, hits }) => {
    const result = await a.run(`echo hi > /dev/tcp/127.0.0.1/${port}`);
    ok(result.code !== 0 && /Connection refused/.test(result.output), result.output);
    equal(await hits(), 0);
  });
});

attackTest("bwrap runner without network cannot resolve names", async (a) => {
  const result = await a.run(
    "getent hosts example.com; echo code=$?; tail -n +3 /proc/net/dev | cut -d: -f1",
  );
  // No name, and no interface but loopback to ask a name server through.
  equal(result.output.replaceAll(" ", ""), "code=2\nlo\n");
});

attackTest("bwrap runner with network reaches the same host server", async (a) => {
  await withServer(async ({ port, hits }) => {
    const result = await a.run(`curl -sS -m 5 http://127.0.0.1:${port}/`);
    equal(result.output, "hello from the host\n");
    equal(await hits(), 1);
  });
}, () => ({ network: true }));

/** curl through the Unix socket at `path`, from inside the sandbox. */
function curlSocket(attack: Attack, path: string) {
  return attack.run(`curl -sS -m 5 --unix-socket ${path} http://host/`);
}

attackTest("bwrap runner cannot reach a socket in ~/.ssh", async (a) => {
  const socket = join(a.box.home, ".ssh", "agent.sock");
  await withSocketServer(socket, async ({ hits }) => {
    const result = await curlSocket(a, socket);
    equal(result.code, 7, result.output);
    equal(await hits(), 0);
  });
});

const hiddenSocket = (box: { outside: string; home: string }) => ({
  hidden: [...secretLocations(box.home), join(box.outside, "docker.sock")],
});

attackTest("bwrap runner cannot reach a socket passed as hidden", async (a) => {
  const socket = join(a.box.outside, "docker.sock");
  await withSocketServer(socket, async ({ hits }) => {
    const result = await curlSocket(a, socket);
    equal(result.code, 7, result.output);
    equal(await hits(), 0);
  });
}, hiddenSocket);

attackTest(
  "bwrap runner reaches a socket that is only read-only (why sockets are hidden)",
  async (a) => {
    const socket = join(a.box.outside, "docker.sock");
    await withSocketServer(socket, async ({ hits }) => {
      const result = await curlSocket(a, socket);
      equal(result.output, "hello from the host\n");
      equal(await hits(), 1);
    });
  },
);

attackTest("bwrap runner cannot reach a host socket under /run", async (a) => {
  const socket = `/run/tern_test_${a.mark}.sock`;
  try {
    await Deno.writeTextFile(socket, "");
    await Deno.remove(socket);
  } catch (error) {
    console.warn(`\n!!!!! SKIPPING the /run socket case, /run is not writable: ${error} !!!!!\n`);
    return;
  }
  await withSocketServer(socket, async ({ hits }) => {
    const result = await a.run(`ls -A /run; curl -sS -m 5 --unix-socket ${socket} http://host/`);
    ok(/Failed to connect|Couldn't connect/.test(result.output), result.output);
    ok(!result.output.includes("tern_test_"), result.output);
    equal(await hits(), 0);
  });
});
