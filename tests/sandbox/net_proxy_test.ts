/**
 * Network by host (#18.5): a shell command with host grants reaches those hosts through tern's
 * filtering proxy and nothing else, with real bubblewrap, a real forwarder and servers on
 * 127.0.0.1; a command without grants has no network at all.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import type { SandboxRuntime } from "../../src/sandbox/runtime.ts";
import { hostAllowed } from "../../src/sandbox/net_proxy.ts";
import { bwrap, withTestSandbox } from "./_bwrap_helpers.ts";

const HAS_CURL = (() => {
  try {
    return Deno.statSync("/usr/bin/curl").isFile;
  } catch {
    return false;
  }
})();

/** Two HTTP servers on 127.0.0.1 that count their requests. */
async function withServers(
  fn: (
    a: { port: number; hits: () => number },
    b: { port: number; hits: () => number },
  ) => Promise<void>,
): Promise<void> {
  const make = () => {
    let hits = 0;
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
      hits++;
      return new Response(`hello from A, host ${request.headers.get("host")}\n`);
    });
    return { server, view: { port: server.addr.port, hits: () => hits } };
  };
  const a = make();
  const b = make();
  try {
    await fn(a.view, b.view);
  } finally {
    await a.server.shutdown();
    await b.server.shutdown();
  }
}

function withRuntime(fn: (runtime: SandboxRuntime, ws: string) => Promise<void>) {
  return withTestSandbox({ name: "net" }, fn);
}

const netTest = (name: string, fn: () => Promise<void>) =>
  Deno.test({ name, ignore: !bwrap.ok || !HAS_CURL, fn });

netTest("createSandbox() with a host grant reaches that host through the proxy only", async () => {
  await withServers(async (a, b) => {
    await withRuntime(async (runtime, ws) => {
      await runtime.setExtraGrants({ net: [`127.0.0.1:${a.port}`] });
      // What `tern sandbox explain` shows is what starts: the forwarder and the proxy variables.
      const shown = runtime.explain();
      ok(shown.bwrap?.join(" ").includes("nsenter"), JSON.stringify(shown.bwrap));
      ok(shown.bwrap?.includes("--info-fd"), JSON.stringify(shown.bwrap));
      ok(shown.bwrapEnv?.includes("https_proxy"), JSON.stringify(shown.bwrapEnv));
      const run = (command: string) => runtime.shell(command, { cwd: ws, timeoutMs: 20_000 });
      const ok1 = await run(`curl -sS --max-time 5 http://127.0.0.1:${a.port}/x`);
      equal(ok1.output.trim(), `hello from A, host 127.0.0.1:${a.port}`, ok1.output);
      deepEqual(ok1.net, { connected: [`127.0.0.1:${a.port}`], refused: [] });
      equal(a.hits(), 1);

      // CONNECT (what https uses) to the granted host works too.
      const tunnel = await run(`curl -sS --max-time 5 --proxytunnel http://127.0.0.1:${a.port}/`);
      equal(tunnel.output.trim(), `hello from A, host 127.0.0.1:${a.port}`, tunnel.output);
      equal(a.hits(), 2);

      // Another port of the same host is refused with 403, by either method.
      const other = await run(
        `curl -s -o /dev/null -w '%{http_code}' --max-time 5 http://127.0.0.1:${b.port}/; echo; ` +
          `curl -s -o /dev/null -w '%{http_connect}' --max-time 5 --proxytunnel http://127.0.0.1:${b.port}/`,
      );
      deepEqual(other.output.trim().split("\n"), ["403", "403"], JSON.stringify(other));
      deepEqual(other.net, { connected: [], refused: [`127.0.0.1:${b.port}`] });
      equal(b.hits(), 0);

      // Around the proxy: curl told to ignore it, and bash's own /dev/tcp.
      const direct = await run(
        `curl -sS --noproxy '*' --max-time 3 http://127.0.0.1:${a.port}/ && echo REACHED; ` +
          `(exec 3<>/dev/tcp/127.0.0.1/${a.port}) 2>/dev/null && echo REACHED-TCP; ` +
          `(exec 3<>/dev/tcp/127.0.0.1/${b.port}) 2>/dev/null && echo REACHED-TCP-B; echo done`,
      );
      ok(!direct.output.includes("REACHED"), direct.output);
      ok(direct.output.includes("done"), direct.output);
      equal(a.hits(), 2);
      equal(b.hits(), 0);
    });
  });
});

netTest("createSandbox() without host grants gives a command no network and no proxy", async () => {
  await withServers(async (a) => {
    await withRuntime(async (runtime, ws) => {
      const result = await runtime.shell(
        `env | grep -i _proxy; curl -sS --max-time 3 http://127.0.0.1:${a.port}/ && echo REACHED; ` +
          `(exec 3<>/dev/tcp/127.0.0.1/3128) 2>/dev/null && echo FORWARDER; echo done`,
        { cwd: ws, timeoutMs: 20_000 },
      );
      ok(!result.output.includes("REACHED"), result.output);
      ok(!result.output.includes("FORWARDER"), result.output);
      ok(!/_proxy=/i.test(result.output), result.output);
      equal(result.net, undefined);
      equal(a.hits(), 0);
      const line = runtime.explain().bwrap?.join(" ") ?? "";
      ok(!line.includes("nsenter") && !line.includes("--info-fd"), line);
    });
  });
});

netTest("the proxy cannot be talked around: raw requests, other names, its socket", async () => {
  await withServers(async (a, b) => {
    await withRuntime(async (runtime, ws) => {
      await runtime.setExtraGrants({ net: [`127.0.0.1:${a.port}`] });
      const raw = (request: string) =>
        `exec 3<>/dev/tcp/127.0.0.1/3128; printf '${request}' >&3; head -c 300 <&3; echo; exec 3>&-`;
      const result = await runtime.shell(
        [
          // A Host header naming another site is replaced by the granted one.
          raw(`GET http://127.0.0.1:${a.port}/ HTTP/1.1\r\nHost: other.example\r\n\r\n`),
          // A user part that looks like the granted host: refused outright (400).
          raw(`GET http://127.0.0.1:${a.port}@127.0.0.1:${b.port}/ HTTP/1.1\r\n\r\n`),
          raw(`CONNECT 127.0.0.1:${b.port} HTTP/1.1\r\n\r\n`),
          raw("GARBAGE\r\n\r\n"),
          // The proxy's socket folder is on the host's /tmp: commands see a private one.
          "ls -d /tmp/tern-proxy-* 2>/dev/null && echo SOCKET-VISIBLE",
          "echo done",
        ].join("; "),
        { cwd: ws, timeoutMs: 20_000 },
      );
      const out = result.output;
      ok(out.includes(`hello from A, host 127.0.0.1:${a.port}`), out);
      ok(!out.includes("other.example"), out);
      equal(out.match(/403 Forbidden/g)?.length, 1, out);
      equal(out.match(/400 Bad Request/g)?.length, 2, out);
      ok(!out.includes("SOCKET-VISIBLE") && out.includes("done"), out);
      equal(b.hits(), 0);
      deepEqual(result.net?.refused, [`127.0.0.1:${b.port}`]);

      // Grants taken back: the next command has no network again, and no proxy.
      await runtime.setExtraGrants({});
      const after = await runtime.shell(
        `curl -sS --max-time 3 http://127.0.0.1:${a.port}/ && echo REACHED; echo done`,
        { cwd: ws, timeoutMs: 20_000 },
      );
      ok(!after.output.includes("REACHED") && after.output.includes("done"), after.output);
      equal(after.net, undefined);
    });
  });
});

Deno.test("hostAllowed() matches host and port as granted, whatever the spelling", () => {
  const allow = ["127.0.0.1:8080", "Example.COM", "[::1]:443"];
  ok(hostAllowed(allow, "127.0.0.1", 8080));
  ok(!hostAllowed(allow, "127.0.0.1", 8081));
  ok(hostAllowed(allow, "0x7f.0.0.1", 8080));
  ok(hostAllowed(allow, "2130706433", 8080));
  ok(hostAllowed(allow, "example.com.", 1234));
  ok(hostAllowed(allow, "EXAMPLE.com", 443));
  ok(!hostAllowed(allow, "sub.example.com", 443));
  ok(!hostAllowed(allow, "example.com.evil.net", 443));
  ok(hostAllowed(allow, "::1", 443));
  ok(!hostAllowed(allow, "::1", 80));
  ok(!hostAllowed(allow, "127.0.0.1@evil", 8080));
  ok(!hostAllowed([], "127.0.0.1", 8080));
});

netTest("the proxy of a command with host grants runs in the run's cgroups (as root)", async () => {
  await withRuntime(async (runtime, ws) => {
    if (runtime.explain().layers?.cgroups.memoryMb === undefined) return; // Not root.
    await runtime.setExtraGrants({ net: ["127.0.0.1:9"] });
    const running = runtime.shell("sleep 1.5; echo slept", { cwd: ws, timeoutMs: 20_000 });
    // The proxy is a Deno process running net_proxy_main.ts: find it while the
    // command runs, and read its cgroups from the host.
    let cgroups = "";
    for (let i = 0; i < 50 && cgroups === ""; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const found = await new Deno.Command("bash", {
        args: [
          "-c",
          // The bracket keeps this bash (its own command line) out of what pgrep finds.
          `for p in $(pgrep -f "net_proxy_mai[n][.]ts"); do cat /proc/$p/cgroup; done`,
        ],
        stdout: "piped",
        stderr: "null",
      }).output();
      cgroups = new TextDecoder().decode(found.stdout);
    }
    equal((await running).output, "slept\n");
    ok(cgroups !== "", "no proxy found");
    const memory = cgroups.split("\n").filter((line) => line.includes(":memory:"));
    ok(memory.length > 0 && memory.every((line) => /\/tern-[0-9a-f]{8}-/.test(line)), cgroups);
  });
});
