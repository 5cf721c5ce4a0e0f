/** The permission gate bounds each call into the tool worker by `limits.toolSeconds`. */
import { equal } from "node:assert/strict";
import { join } from "node:path";
import { PermissionGate } from "../../src/agent/permission_gate.ts";
import { DEFAULT_LIMITS } from "../../src/config/schema.ts";
import { createSandbox } from "../../src/sandbox/runtime.ts";
import { SecretMasker } from "../../src/sandbox/secrets.ts";
import { builtinLoader, builtinTools } from "../../src/tools/mod.ts";

Deno.test("PermissionGate ends a worker call that runs away at the tool time limit", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-timeout-" }));
  const ws = join(root, "ws");
  await Deno.mkdir(ws);
  await Deno.writeTextFile(join(ws, "a.txt"), "a\n");
  const runtime = await createSandbox({
    workspace: ws,
    profile: ":workspace",
    noSandbox: false,
    ternHome: join(root, "tern-home"),
    env: { PATH: "/usr/bin:/bin", HOME: root },
    home: root,
    handlerUrl: new URL("./_fixtures/spinning_handler.ts", import.meta.url),
    runId: "timeout-test",
    limits: { ...DEFAULT_LIMITS, toolSeconds: 1 },
  });
  try {
    const gate = new PermissionGate({
      runtime,
      rules: [],
      mode: "bypass",
      reviewTimeoutMs: 1000,
      masker: new SecretMasker([]),
      emit: () => {},
    });
    const read = gate.wrap(builtinTools(builtinLoader()).find((tool) => tool.name === "read")!);
    const observation = await read.run({ path: "a.txt" }, {
      workspace: ws,
      signal: new AbortController().signal,
    });
    equal(observation.status === "ERROR" && observation.code, "TIMEOUT");
  } finally {
    await runtime.close();
    await Deno.remove(root, { recursive: true });
  }
});
