/**
 * Adversarial: HOME is whatever started tern says (`HOME=/tmp/x tern`, a service without HOME).
 * The home folder of tern's user account, the one /etc/passwd names, must stay hidden from
 * commands all the same, with the keys in it, while the workspace inside it stays usable.
 */
import { deepEqual, equal } from "node:assert/strict";
import { dirname, join } from "node:path";
import { passwdHome } from "../../src/sandbox/home_view.ts";
import { createSandbox } from "../../src/sandbox/runtime.ts";
import { bwrapTest } from "./_bwrap_helpers.ts";

const PLANTED = [".ssh/id_ed25519", ".gitconfig", ".cargo/credentials.toml", ".bash_history"];

for (const home of ["elsewhere", "unset"] as const) {
  bwrapTest(
    `createSandbox() shell: the account's home stays hidden with HOME ${home}`,
    async () => {
      const root = await Deno.realPath(
        await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_account_home_" }),
      );
      const account = join(root, "me");
      const ws = join(account, "proj");
      for (const path of PLANTED) {
        await Deno.mkdir(dirname(join(account, path)), { recursive: true });
        await Deno.writeTextFile(join(account, path), `ACCOUNT-SECRET ${path}\n`);
      }
      await Deno.mkdir(ws, { recursive: true });
      await Deno.writeTextFile(join(ws, "README.md"), "workspace\n");
      const fakeHome = join(root, "fake-home");
      await Deno.mkdir(fakeHome);
      const runtime = await createSandbox({
        workspace: ws,
        profile: ":workspace",
        noSandbox: false,
        home: home === "elsewhere" ? fakeHome : undefined,
        accountHome: account,
        ternHome: join(root, "tern-home"),
        env: {
          PATH: "/usr/local/bin:/usr/bin:/bin",
          ...home === "elsewhere" ? { HOME: fakeHome } : {},
        },
        handlerUrl: new URL("../../src/tools/worker_handler.ts", import.meta.url),
        runId: "account-home-test",
      });
      try {
        const result = await runtime.shell(
          `grep -rah ACCOUNT-SECRET ${account} 2>/dev/null; ls -A ${account}; cat README.md; ` +
            `echo new > made.txt && echo "<ran>"`,
          { cwd: ws, timeoutMs: 60_000 },
        );
        deepEqual(result.output.split("\n").filter((line) => line !== ""), [
          "proj",
          "workspace",
          "<ran>",
        ]);
        equal(await Deno.readTextFile(join(ws, "made.txt")), "new\n");
      } finally {
        await runtime.close();
        await Deno.remove(root, { recursive: true });
      }
    },
  );
}

Deno.test("passwdHome() reads the home of a uid from a passwd file, and nothing else", async () => {
  const file = await Deno.makeTempFile();
  try {
    await Deno.writeTextFile(
      file,
      "root:x:0:0:root:/root:/bin/bash\n" +
        "me:x:1000:1000:Me,,,:/home/me:/bin/bash\n" +
        "odd:x::1:no uid:/home/odd:/bin/sh\n" +
        "rel:x:1001:1001::relative/home:/bin/sh\n",
    );
    equal(passwdHome(1000, file), "/home/me");
    equal(passwdHome(0, file), "/root");
    equal(passwdHome(1001, file), undefined);
    equal(passwdHome(4242, file), undefined);
    equal(passwdHome(null, file), undefined);
    equal(passwdHome(0, join(file, "missing")), undefined);
  } finally {
    await Deno.remove(file);
  }
});
