/**
 * A proxy variable can carry the person's proxy password (`http://me:<password>@proxy:3128`).
 * What gets the proxy variables (commands with the network, MCP servers) never gets that.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { createSandbox } from "../../src/sandbox/runtime.ts";
import { networkEnv } from "../../src/sandbox/shell_env.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

Deno.test("networkEnv() takes a proxy URL's user and password out, in every spelling", () => {
  const env = networkEnv({
    HTTPS_PROXY: "http://me:Pr0xyPassw0rd@proxy.corp.example:3128/",
    https_proxy: "socks5h://tok3nAbcdefghijkl123@proxy.corp.example:1080",
    HTTP_PROXY: "me:p@ss:w0rd@proxy.corp.example:8080",
    http_proxy: "http://proxy.corp.example:3128",
    NO_PROXY: "localhost,u:Pr0xyPassw0rd@internal.example,.corp.example",
  });
  deepEqual(env, {
    HTTPS_PROXY: "http://proxy.corp.example:3128/",
    https_proxy: "socks5h://proxy.corp.example:1080",
    HTTP_PROXY: "proxy.corp.example:8080",
    http_proxy: "http://proxy.corp.example:3128",
    NO_PROXY: "localhost,internal.example,.corp.example",
  });
  for (const value of Object.values(env)) {
    equal(/Pr0xyPassw0rd|tok3n|w0rd/.test(value), false, value);
  }
});

Deno.test("networkEnv() leaves out a proxy variable that still holds a secret, and keeps CA paths", () => {
  const env = networkEnv({
    HTTPS_PROXY: "http://proxy.corp.example:3128/?token=abc123def456ghi789",
    SSL_CERT_FILE: "/etc/ssl/certs/ca@corp.pem",
    NODE_EXTRA_CA_CERTS: "/etc/ssl/certs/ca-certificates.crt",
    no_proxy: "*",
  });
  deepEqual(env, {
    SSL_CERT_FILE: "/etc/ssl/certs/ca@corp.pem",
    NODE_EXTRA_CA_CERTS: "/etc/ssl/certs/ca-certificates.crt",
    no_proxy: "*",
  });
});

testWith(
  [bwrapNeed],
  "a command with the network sees the proxy without its password, and no secret of tern's environment",
  async () => {
    const root = await Deno.realPath(
      await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_proxy_env_" }),
    );
    const ws = join(root, "ws");
    await Deno.mkdir(ws);
    const secret = "Pr0xyPassw0rdZq7Wm2Kp9";
    const sandbox = await createSandbox({
      workspace: ws,
      profile: ":external",
      noSandbox: false,
      ternHome: join(root, "tern-home"),
      env: {
        PATH: "/usr/local/bin:/usr/bin:/bin",
        HOME: root,
        HTTPS_PROXY: `http://me:${secret}@proxy.corp.example:3128`,
        http_proxy: `${secret}@proxy.corp.example:3128`,
        ALL_PROXY: `socks5://me:${secret}@proxy.corp.example:1080`,
        GITHUB_TOKEN: secret,
        AWS_SECRET_ACCESS_KEY: secret,
        DATABASE_URL: `postgres://app:${secret}@db.example/app`,
        GIT_ASKPASS: `/bin/echo ${secret}`,
        SSH_AUTH_SOCK: `/tmp/ssh-${secret}/agent.1`,
      },
      home: root,
      handlerUrl: new URL("../../src/tools/worker_handler.ts", import.meta.url),
      runId: "proxy-env-test",
    });
    try {
      const result = await sandbox.shell("env", { cwd: ws, timeoutMs: 20_000 });
      equal(result.code, 0, result.output);
      equal(result.output.includes(secret), false, result.output);
      ok(result.output.includes("HTTPS_PROXY=http://proxy.corp.example:3128"), result.output);
      ok(result.output.includes("http_proxy=proxy.corp.example:3128"), result.output);
    } finally {
      await sandbox.close();
      await Deno.remove(root, { recursive: true });
    }
  },
);
