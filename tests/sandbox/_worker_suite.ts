/**
 * The WorkerHost tests, for either backend. worker_test.ts runs them with the process
 * backend, and in a child `deno test --unstable-worker-options` with the Worker backend.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { Observation, ToolErrorCode } from "../../src/core/observation.ts";
import { WorkerHost, type WorkerHostOptions } from "../../src/sandbox/worker/host.ts";
import type { Grants } from "../../src/sandbox/types.ts";
import { createBuiltinTools } from "../../src/tools/builtin.ts";

/** The real handler module and the test one (real tools plus misbehaving ones). */
export const REAL_HANDLER = new URL("../../src/tools/worker_handler.ts", import.meta.url);
export const TEST_HANDLER = new URL("./_fixtures/test_handler.ts", import.meta.url);

/** Grants of nothing, to widen per test. */
export const NONE: Grants = { read: [], write: [], net: [], env: [], run: [] };

/** A temp workspace `ws` (real path) and a sibling folder `outside` with a file. */
export interface Box {
  ws: string;
  outside: string;
}

/** Runs `fn` with a fresh box and removes it afterwards. */
export async function withBox(fn: (box: Box) => Promise<void>): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern_worker_" }));
  const box = { ws: join(root, "ws"), outside: join(root, "outside") };
  try {
    await Deno.mkdir(box.ws);
    await Deno.mkdir(box.outside);
    await Deno.writeTextFile(join(box.outside, "secret.txt"), "top secret\n");
    await fn(box);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** Runs `fn` with a host in `box.ws` and closes it afterwards. */
export async function withHost(
  box: Box,
  options: Partial<WorkerHostOptions>,
  fn: (host: WorkerHost) => Promise<void>,
): Promise<void> {
  const host = new WorkerHost({
    grants: { ...NONE, read: [box.ws], write: [box.ws] },
    handlerUrl: TEST_HANDLER,
    workspace: box.ws,
    ...options,
  });
  try {
    await fn(host);
  } finally {
    await host.close();
  }
}

/** The output of a SUCCEEDED observation; fails the test otherwise. */
export function succeeded(obs: Observation): string {
  ok(obs.status === "SUCCEEDED", `expected SUCCEEDED, got ${JSON.stringify(obs)}`);
  return obs.output;
}

/** The message of an ERROR observation with `code`; fails the test otherwise. */
export function failed(obs: Observation, code: ToolErrorCode): string {
  ok(obs.status === "ERROR" && obs.code === code, `expected ${code}, got ${JSON.stringify(obs)}`);
  return obs.message;
}

/** An `onUpdate` for a call, and a promise of the first update it sends. */
export function firstUpdate(): { onUpdate: (text: string) => void; seen: Promise<string> } {
  let onUpdate: (text: string) => void = () => {};
  const seen = new Promise<string>((resolve) => onUpdate = resolve);
  return { onUpdate, seen };
}

/** Registers the backend-independent WorkerHost tests for `backend`. */
export function workerSuite(backend: "process" | "worker"): void {
  const test = (claim: string, fn: () => Promise<void>) =>
    Deno.test(`WorkerHost (${backend}) ${claim}`, fn);

  test("runs the file tools with the same observations as in-process", async () => {
    await withBox(async (box) => {
      const twin = join(box.outside, "twin");
      const files = { "a.txt": "alpha\nbeta\n", "src/b.ts": "export const beta = 2;\n" };
      const steps: [string, unknown][] = [
        ["read", { path: "a.txt" }],
        ["write", { path: "src/c.ts", content: "const gamma = 3;\n" }],
        ["edit", { path: "a.txt", old_string: "beta", new_string: "BETA" }],
        ["list", { path: "." }],
        ["glob", { pattern: "**/*.ts" }],
        ["grep", { pattern: "beta", ignore_case: true }],
        ["read", { path: "missing.txt" }],
        ["edit", { path: "a.txt", old_string: "nope", new_string: "x" }],
      ];
      for (const dir of [box.ws, twin]) {
        await Deno.mkdir(join(dir, "src"), { recursive: true });
        for (const [path, text] of Object.entries(files)) {
          await Deno.writeTextFile(join(dir, path), text);
        }
      }
      const tools = new Map(createBuiltinTools({ ripgrep: false }).map((t) => [t.name, t]));
      const inProcess: Observation[] = [];
      for (const [name, args] of steps) {
        const obs = await tools.get(name)!.run(args, {
          workspace: twin,
          signal: AbortSignal.any([]),
        });
        inProcess.push(JSON.parse(JSON.stringify(obs)));
      }
      await withHost(box, { handlerUrl: REAL_HANDLER }, async (host) => {
        const inWorker: Observation[] = [];
        for (const [name, args] of steps) inWorker.push(await host.call(name, args));
        deepEqual(inWorker, inProcess);
        equal(succeeded(inWorker[1]), succeeded(inProcess[1]));
      });
      equal(await Deno.readTextFile(join(box.ws, "a.txt")), "alpha\nBETA\n");
    });
  });

  test("denies a read outside the grants even when the tool's own check allows it", async () => {
    await withBox(async (box) => {
      const secret = join(box.outside, "secret.txt");
      // In-process, with "/" as the workspace, the path check lets the read through.
      const [read] = createBuiltinTools();
      succeeded(await read.run({ path: secret }, { workspace: "/", signal: AbortSignal.any([]) }));
      await withHost(box, { handlerUrl: REAL_HANDLER }, async (host) => {
        const message = failed(
          await host.call("read", { path: secret }, { workspace: "/" }),
          "POLICY_DENIED",
        );
        equal(
          message,
          `The sandbox does not allow read access to "${secret}": ask for it with request_permissions`,
        );
        const etc = failed(
          await host.call("read", { path: "/etc/hostname" }, { workspace: "/etc" }),
          "POLICY_DENIED",
        );
        ok(etc.includes('read access to "/etc/hostname"'), etc);
      });
    });
  });

  test("denies a write under a read-only grant and changes nothing", async () => {
    await withBox(async (box) => {
      await Deno.writeTextFile(join(box.ws, "keep.txt"), "original\n");
      await withHost(
        box,
        { grants: { ...NONE, read: [box.ws] }, handlerUrl: REAL_HANDLER },
        async (host) => {
          const write = await host.call("write", { path: "new.txt", content: "x" });
          ok(failed(write, "POLICY_DENIED").includes("does not allow write access"));
          const edit = await host.call("edit", {
            path: "keep.txt",
            old_string: "original",
            new_string: "changed",
          });
          failed(edit, "POLICY_DENIED");
          succeeded(await host.call("read", { path: "keep.txt" }));
        },
      );
      deepEqual([...Deno.readDirSync(box.ws)].map((e) => e.name), ["keep.txt"]);
      equal(await Deno.readTextFile(join(box.ws, "keep.txt")), "original\n");
    });
  });

  test("keeps environment variables that are not granted from the tools", async () => {
    await withBox(async (box) => {
      await withHost(box, {}, async (host) => {
        const message = failed(await host.call("env", { name: "TERN_API_KEY" }), "POLICY_DENIED");
        ok(message.includes('env access to "TERN_API_KEY"'), message);
      });
    });
  });

  test("refuses bash and unknown tools", async () => {
    await withBox(async (box) => {
      await withHost(box, { handlerUrl: REAL_HANDLER }, async (host) => {
        failed(await host.call("bash", { command: "echo hi" }), "UNKNOWN_TOOL");
        failed(await host.call("nope", {}), "UNKNOWN_TOOL");
        failed(await host.call("read", { path: 3 }), "INVALID_ARGUMENTS");
        failed(await host.call("read", { path: 1n }), "INVALID_ARGUMENTS");
      });
    });
  });

  test("forwards updates and runs calls concurrently", async () => {
    await withBox(async (box) => {
      await withHost(box, {}, async (host) => {
        const updates: string[] = [];
        const echo = await host.call("echo", { text: "done", updates: ["one", "two"] }, {
          onUpdate: (text) => updates.push(text),
        });
        equal(succeeded(echo), "done");
        deepEqual(updates, ["one", "two"]);
        // "wait" answers only when cancelled: other calls must finish while it is in flight.
        const controller = new AbortController();
        const started = firstUpdate();
        const waiting = host.call("wait", {}, {
          signal: controller.signal,
          onUpdate: started.onUpdate,
        });
        await started.seen;
        const echoes = await Promise.all(
          ["a", "b", "c"].map((text) => host.call("echo", { text })),
        );
        deepEqual(echoes.map(succeeded), ["a", "b", "c"]);
        controller.abort();
        failed(await waiting, "CANCELLED");
        // It answered the cancel, so the same worker goes on.
        equal(succeeded(await host.call("count", {})), "1");
      });
    });
  });

  test("keeps console output of tools off the protocol", async () => {
    await withBox(async (box) => {
      await withHost(box, {}, async (host) => {
        const results = await Promise.all([
          host.call("noisy", {}),
          host.call("echo", { text: "e" }),
        ]);
        deepEqual(results.map(succeeded), ["genuine", "e"]);
        equal(succeeded(await host.call("count", {})), "1");
      });
    });
  });

  test("times out a call that hangs and replaces its worker", async () => {
    await withBox(async (box) => {
      await withHost(box, { cancelGraceMs: 100 }, async (host) => {
        equal(succeeded(await host.call("count", {})), "1");
        const hung = await host.call("hang", {}, { timeoutMs: 100 });
        equal(failed(hung, "TIMEOUT"), 'Tool "hang" timed out after 100 ms');
        equal(succeeded(await host.call("count", {})), "1");
      });
    });
  });

  test("cancels a call that ignores the cancel by replacing its worker", async () => {
    await withBox(async (box) => {
      await withHost(box, { cancelGraceMs: 100 }, async (host) => {
        succeeded(await host.call("count", {}));
        const controller = new AbortController();
        const [hangStarted, waitStarted] = [firstUpdate(), firstUpdate()];
        const hung = host.call("hang", {}, { signal: controller.signal, ...hangStarted });
        const other = host.call("wait", {}, waitStarted);
        await Promise.all([hangStarted.seen, waitStarted.seen]);
        controller.abort();
        equal(failed(await hung, "CANCELLED"), 'Tool "hang" was cancelled');
        ok(failed(await other, "EXECUTION_FAILED").includes("may or may not have taken effect"));
        equal(succeeded(await host.call("count", {})), "1");
        failed(await host.call("count", {}, { signal: AbortSignal.abort() }), "CANCELLED");
      });
    });
  });

  test("replaces a worker that crashed", async () => {
    await withBox(async (box) => {
      await withHost(box, {}, async (host) => {
        succeeded(await host.call("count", {}));
        const crash = failed(await host.call("crash", {}), "EXECUTION_FAILED");
        ok(crash.includes("deliberate crash"), crash);
        equal(succeeded(await host.call("count", {})), "1");
      });
    });
  });

  test("restart() widens the grants for the next call", async () => {
    await withBox(async (box) => {
      const secret = join(box.outside, "secret.txt");
      await withHost(box, { handlerUrl: REAL_HANDLER }, async (host) => {
        failed(
          await host.call("read", { path: secret }, { workspace: box.outside }),
          "POLICY_DENIED",
        );
        host.restart({ ...host.grants, read: [box.ws, box.outside] });
        ok(host.flags.some((flag) => flag === `--allow-read=${box.ws},${box.outside}`));
        const obs = await host.call("read", { path: secret }, { workspace: box.outside });
        ok(succeeded(obs).includes("top secret"));
      });
    });
  });

  test("passes a call's roots to the tool, which still needs the grants", async () => {
    await withBox(async (box) => {
      const secret = join(box.outside, "secret.txt");
      const roots = { read: [box.outside], write: [] };
      await withHost(box, { handlerUrl: REAL_HANDLER }, async (host) => {
        const outside = failed(await host.call("read", { path: secret }), "POLICY_DENIED");
        ok(outside.includes("outside the workspace"), outside);
        // The roots pass the tool's own check; Deno's flags still refuse the read.
        const flags = failed(await host.call("read", { path: secret }, { roots }), "POLICY_DENIED");
        ok(flags.includes(`read access to "${secret}"`), flags);
        host.restart({ ...host.grants, read: [box.ws, box.outside] });
        equal(
          succeeded(await host.call("read", { path: secret }, { roots })),
          "     1\ttop secret",
        );
        failed(await host.call("read", { path: secret }), "POLICY_DENIED");
        const write = { path: join(box.outside, "new.txt"), content: "x" };
        failed(await host.call("write", write, { roots }), "POLICY_DENIED");
      });
    });
  });

  test("reports a handler module that cannot load", async () => {
    await withBox(async (box) => {
      const handlerUrl = new URL("./_fixtures/missing_handler.ts", import.meta.url);
      await withHost(box, { handlerUrl }, async (host) => {
        const message = failed(await host.call("count", {}), "EXECUTION_FAILED");
        ok(message.startsWith('Cannot run "count": the tool worker'), message);
        ok(message.includes("missing_handler.ts"), message);
      });
    });
  });

  test("close() ends calls in flight as CANCELLED and refuses new ones", async () => {
    await withBox(async (box) => {
      const host = new WorkerHost({ grants: NONE, handlerUrl: TEST_HANDLER, workspace: box.ws });
      const started = firstUpdate();
      const waiting = host.call("wait", {}, { onUpdate: started.onUpdate });
      await started.seen;
      await host.close();
      equal(
        failed(await waiting, "CANCELLED"),
        'Tool "wait" was cancelled: the tool worker was closed',
      );
      failed(await host.call("count", {}), "EXECUTION_FAILED");
    });
  });
}
