/**
 * No network at run time but the model's: `tern run` in a network namespace that has only
 * loopback, with a DNS server of ours as the only resolver, completes a tool round against the
 * scripted model on 127.0.0.1 and asks no name of anyone (no npm registry, no update check).
 */
import { deepEqual, equal, match } from "node:assert/strict";
import { join } from "node:path";
import { canIsolate } from "../support/netns.ts";
import { ROOT } from "../support/tern_process.ts";

const decoder = new TextDecoder();

const isolate = canIsolate();
if (!isolate) {
  console.warn(
    "\n!!!!! SKIPPED: the offline run test: cannot make a network namespace here " +
      "(needs unshare and ip from util-linux and iproute2, and user namespaces) !!!!!\n",
  );
}

Deno.test({
  name: "tern run in a namespace with only loopback completes and looks up no name at all",
  ignore: !isolate,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "tern-offline-" });
    try {
      const resolv = join(dir, "resolv.conf");
      await Deno.writeTextFile(resolv, "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n");
      const inside = join(ROOT, "tests/fixtures/offline/run_inside.ts");
      const script = `ip link set lo up && mount --bind "$1" /etc/resolv.conf && exec "$2" run ` +
        `--cached-only -A --no-prompt "$3"`;
      // The cache bin/setup filled: the person's own, as tern would find it.
      const info = new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" });
      const { denoDir } = JSON.parse(decoder.decode((await info.output()).stdout));
      const out = await new Deno.Command("unshare", {
        args: [
          "--net",
          "--mount",
          "--map-root-user",
          "bash",
          "-c",
          script,
          "_",
          resolv,
          Deno.execPath(),
          inside,
        ],
        env: { DENO_DIR: denoDir, DENO_NO_UPDATE_CHECK: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      equal(out.code, 0, decoder.decode(out.stderr));
      const result = JSON.parse(decoder.decode(out.stdout).trim().split("\n").at(-1)!);
      equal(result.code, 0, result.stderr);
      match(result.stdout, /The notes say hello\./);
      equal(result.requests, 2, "the model got both rounds");
      deepEqual(result.queries, [], "no DNS lookup of any name");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
