/** Grants → Deno flags and Worker permissions, the wire protocol, and denial wording. */
import { deepEqual, equal, ok, throws } from "node:assert/strict";
import {
  denoFlags,
  entryModuleUrl,
  RUNTIME_ENV,
  withRuntimeNeeds,
  workerPermissions,
  workerRunArgs,
} from "../../src/sandbox/worker/flags.ts";
import { workerEnv } from "../../src/sandbox/worker/process_channel.ts";
import {
  MALFORMED_RESULT,
  parseChildMessage,
  parseHostMessage,
  readJsonLines,
} from "../../src/sandbox/worker/protocol.ts";
import type { Grants } from "../../src/sandbox/types.ts";
import { explainDenial } from "../../src/tools/worker_handler.ts";

const NONE: Grants = { read: [], write: [], net: [], env: [], run: [] };
const ALL: Grants = { read: "all", write: "all", net: "all", env: "all", run: "all" };

Deno.test("denoFlags() maps lists, all and empty in a fixed order", () => {
  deepEqual(denoFlags(NONE), ["--no-prompt"]);
  deepEqual(
    denoFlags({ run: ["rg"], env: ["A", "B"], net: "all", write: ["/w"], read: ["/r", "/w"] }),
    [
      "--no-prompt",
      "--allow-read=/r,/w",
      "--allow-write=/w",
      "--allow-net",
      "--allow-env=A,B",
      "--allow-run=rg",
    ],
  );
  deepEqual(denoFlags({ ...NONE, read: ["/a", "/a"] }), ["--no-prompt", "--allow-read=/a"]);
});

Deno.test("denoFlags() never grants ffi or everything at once", () => {
  const flags = denoFlags(ALL);
  deepEqual(flags, [
    "--no-prompt",
    "--allow-read",
    "--allow-write",
    "--allow-net",
    "--allow-env",
    "--allow-run",
    "--deny-ffi",
  ]);
  ok(!flags.some((flag) => flag === "--allow-all" || flag === "-A" || flag.includes("ffi=")));
});

Deno.test("denoFlags() denies writing tern's home after every write grant, even all", () => {
  deepEqual(denoFlags({ ...NONE, write: ["/h"], read: ["/h"] }, ["/h/.tern"]), [
    "--no-prompt",
    "--allow-read=/h",
    "--allow-write=/h",
    "--deny-write=/h/.tern",
  ]);
  equal(denoFlags(ALL, ["/t"]).at(-1), "--deny-write=/t");
  deepEqual(denoFlags({ ...NONE, read: ["/h"] }, ["/t"]), ["--no-prompt", "--allow-read=/h"]);
  throws(() => denoFlags({ ...NONE, write: ["/h"] }, ["/a,b"]), RangeError);
});

Deno.test("denoFlags() refuses entries a flag cannot carry", () => {
  throws(() => denoFlags({ ...NONE, read: ["/a,b"] }), RangeError);
  throws(() => denoFlags({ ...NONE, env: [""] }), RangeError);
  throws(() => denoFlags({ ...NONE, net: ["a\nb"] }), /Cannot grant net access to "a\\nb"/);
});

Deno.test("workerPermissions() mirrors the flags and never grants ffi, sys or imports", () => {
  deepEqual(workerPermissions({ ...NONE, read: ["/r"], net: "all" }), {
    read: ["/r"],
    write: false,
    net: true,
    env: false,
    run: false,
    ffi: false,
    sys: false,
    import: false,
  });
  deepEqual(workerPermissions(ALL).ffi, false);
});

Deno.test("withRuntimeNeeds() adds only the env names the worker's code reads", () => {
  deepEqual(withRuntimeNeeds(NONE), { ...NONE, env: [...RUNTIME_ENV] });
  deepEqual(withRuntimeNeeds({ ...NONE, env: ["X"] }).env, ["X", ...RUNTIME_ENV]);
  equal(withRuntimeNeeds(ALL).env, "all");
});

Deno.test("workerRunArgs() runs a data: entry with the config and no downloads", () => {
  const handlerUrl = new URL("file:///opt/tern/src/tools/worker_handler.ts");
  const args = workerRunArgs({
    grants: { ...NONE, read: ["/ws"] },
    handlerUrl,
    configPath: "/opt/tern/deno.json",
  });
  deepEqual(args.slice(0, -1), [
    "run",
    "--no-prompt",
    "--allow-read=/ws",
    `--allow-env=${RUNTIME_ENV.join(",")}`,
    "--quiet",
    "--cached-only",
    "--no-remote",
    "--config",
    "/opt/tern/deno.json",
  ]);
  equal(args.at(-1), entryModuleUrl(handlerUrl, "stdio"));
  const noConfig = workerRunArgs({ grants: NONE, handlerUrl, configPath: null });
  ok(noConfig.includes("--no-config") && !noConfig.includes("--config"));
  ok(
    workerRunArgs({ grants: NONE, handlerUrl }).includes(
      new URL("../../deno.json", import.meta.url).pathname,
    ),
  );
});

Deno.test("workerRunArgs() reads no config under a Deno workspace above tern's checkout", async () => {
  // A deno.json above the checkout that names a workspace (a folder commands may write holds
  // the checkout): Deno would load the worker as one of its members, whose links replace the
  // packages it imports.
  const above = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-above-" }));
  try {
    const handlerUrl = new URL("file:///opt/tern/src/tools/worker_handler.ts");
    await Deno.mkdir(`${above}/tern`);
    const configPath = `${above}/tern/deno.json`;
    await Deno.writeTextFile(configPath, "{}\n");
    await Deno.writeTextFile(`${above}/deno.json`, '{ "tasks": {} }\n');
    const plain = workerRunArgs({ grants: NONE, handlerUrl, configPath });
    ok(plain.includes("--config") && !plain.includes("--no-config"), String(plain));
    await Deno.writeTextFile(`${above}/deno.json`, '{ "workspace": ["./tern"] }\n');
    const args = workerRunArgs({ grants: NONE, handlerUrl, configPath });
    ok(args.includes("--no-config") && args.includes("--no-lock"), String(args));
    ok(!args.includes("--config") && !args.includes(configPath), String(args));
    equal(args.at(-1), entryModuleUrl(handlerUrl, "stdio"));
  } finally {
    await Deno.remove(above, { recursive: true });
  }
});

Deno.test("entryModuleUrl() imports child.ts and the handler statically", () => {
  const handler = new URL("file:///opt/tern/handler.ts");
  const source = decodeURIComponent(
    entryModuleUrl(handler, "worker").replace(/^data:text\/javascript,/, ""),
  );
  ok(source.includes('import { serveWorkerScope } from "file:///'), source);
  ok(source.includes('import { handleToolCall } from "file:///opt/tern/handler.ts"'), source);
  ok(!source.includes("import("), source);
});

Deno.test("workerEnv() passes what deno needs and what the grants name, never secrets", () => {
  const source = {
    PATH: "/bin",
    HOME: "/h",
    TERN_API_KEY: "k",
    OPENAI_API_KEY: "o",
    LANG: "C",
    X: "x",
  };
  deepEqual(workerEnv(source, NONE), {
    PATH: "/bin",
    HOME: "/h",
    NO_COLOR: "1",
    DENO_NO_UPDATE_CHECK: "1",
    DENO_NO_PACKAGE_JSON: "1",
  });
  equal(workerEnv(source, { ...NONE, env: ["X"] }).X, "x");
  const all = workerEnv(source, { ...NONE, env: "all" }, "/tmp/audit.jsonl");
  equal(all.LANG, "C");
  equal(all.TERN_API_KEY, undefined);
  equal(all.OPENAI_API_KEY, undefined);
  equal(all.X, undefined);
  equal(all.DENO_AUDIT_PERMISSIONS, "/tmp/audit.jsonl");
});

Deno.test("parseHostMessage() keeps well-formed roots and refuses a call with malformed ones", () => {
  const call = { id: 1, type: "call", tool: "read", args: {}, workspace: "/w" };
  const roots = { read: ["/r"], write: ["/w2"] };
  deepEqual(parseHostMessage({ ...call, roots }), { ...call, roots });
  deepEqual(parseHostMessage({ ...call, roots: undefined }), call);
  const malformed: unknown[] = [
    null,
    "/r",
    [],
    { read: ["/r"] },
    { read: "/r", write: [] },
    { read: [1], write: [] },
    { read: [], write: [null] },
  ];
  for (const bad of malformed) {
    equal(parseHostMessage({ ...call, roots: bad }), null, JSON.stringify(bad));
  }
});

Deno.test("parseHostMessage() and parseChildMessage() accept only well-formed messages", () => {
  deepEqual(
    parseHostMessage({ id: 1, type: "call", tool: "read", args: { a: 1 }, workspace: "/w" }),
    {
      id: 1,
      type: "call",
      tool: "read",
      args: { a: 1 },
      workspace: "/w",
    },
  );
  equal(parseHostMessage({ id: 0, type: "cancel" }), null);
  equal(parseHostMessage({ id: 1, type: "call", tool: 3, workspace: "/w" }), null);
  deepEqual(parseChildMessage({ type: "ready" }), { type: "ready" });
  // A malformed result still ends its call, as a failure.
  deepEqual(
    parseChildMessage({
      id: 2,
      type: "result",
      observation: { status: "ERROR", code: "NOPE", message: "m" },
    }),
    { id: 2, type: "result", observation: MALFORMED_RESULT },
  );
  deepEqual(
    parseChildMessage({
      id: 2,
      type: "result",
      observation: { status: "SUCCEEDED", output: "o", details: 5 },
    }),
    {
      id: 2,
      type: "result",
      observation: { status: "SUCCEEDED", output: "o" },
    },
  );
  equal(parseChildMessage({ id: 2, type: "update" }), null);
});

Deno.test("readJsonLines() splits chunks into lines and survives stray text", async () => {
  const chunks = ['{"a":1}\n{"b"', ':2}\nnot json\n{"c":3}'];
  const stream = ReadableStream.from(chunks.map((chunk) => new TextEncoder().encode(chunk)));
  const values: unknown[] = [];
  for await (const value of readJsonLines(stream)) values.push(value);
  deepEqual(values, [{ a: 1 }, { b: 2 }, undefined, { c: 3 }]);
});

Deno.test("explainDenial() replaces Deno's advice with the sandbox's", () => {
  const denied = explainDenial({
    status: "ERROR",
    code: "EXECUTION_FAILED",
    message: 'Requires read access to "/etc/passwd", run again with the --allow-read flag',
  });
  deepEqual(denied, {
    status: "ERROR",
    code: "POLICY_DENIED",
    message:
      'The sandbox does not allow read access to "/etc/passwd": ask for it with request_permissions',
  });
  const wrapped = explainDenial({
    status: "ERROR",
    code: "POLICY_DENIED",
    message:
      'Cannot fetch: Requires net access to "example.com:443", specify the required permissions during compilation using `deno compile --allow-net`',
  });
  equal(
    wrapped.status === "ERROR" && wrapped.message,
    'Cannot fetch: The sandbox does not allow net access to "example.com:443": ask for it with request_permissions',
  );
  const other = {
    status: "ERROR",
    code: "NOT_FOUND",
    message: 'Cannot read "a": not found',
  } as const;
  equal(explainDenial(other), other);
});
