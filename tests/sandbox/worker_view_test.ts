/**
 * The tool worker's bubblewrap view (src/sandbox/worker/view.ts), run for real: programs
 * started in it see the workspace, the grants and what Deno needs, and nothing else.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { basename, join } from "node:path";
import {
  workerBwrapArgv,
  workerPlan,
  type WorkerViewNeeds,
} from "../../src/sandbox/worker/view.ts";
import type { ShellPlan } from "../../src/sandbox/types.ts";
import { assertNoProcessWith, bwrapTest, planFor, withBox } from "./_bwrap_helpers.ts";
import { secretLocations } from "../../src/sandbox/protected_paths.ts";
import { createSandbox } from "../../src/sandbox/runtime.ts";

/** Runs `script` with bash in the worker view of `plan`; its exit code and output. */
async function inView(
  plan: ShellPlan,
  needs: Partial<WorkerViewNeeds>,
  script: string,
): Promise<{ code: number; out: string }> {
  const full: WorkerViewNeeds = {
    grants: { read: [plan.cwd], write: [plan.cwd], net: [], env: [], run: [] },
    denoPath: Deno.execPath(),
    denoDir: "/nonexistent",
    sourceRoot: null,
    ...needs,
  };
  const argv = workerBwrapArgv(plan, full, ["bash", "-c", `exec 2>&1; ${script}`]);
  const result = await new Deno.Command("bwrap", {
    args: argv,
    env: { PATH: "/usr/bin:/bin" },
    clearEnv: true,
    stdin: "null",
  }).output();
  return { code: result.code, out: new TextDecoder().decode(result.stdout) };
}

bwrapTest(
  "workerBwrapArgv() shows the workspace and nothing of its siblings or the home",
  async () => {
    await withBox(async (box) => {
      const plan = await planFor(box);
      const seen = await inView(
        plan,
        {},
        `cat README.md; cat ${box.outside}/secret.txt; ls ${box.root}`,
      );
      ok(seen.out.includes("hello"), seen.out);
      ok(!seen.out.includes("top secret"), seen.out);
      ok(/No such file/.test(seen.out), seen.out);
      const home = await inView(
        plan,
        {},
        `cat ${box.home}/.bashrc ${box.home}/.ssh/id_rsa; ls /etc`,
      );
      ok(!home.out.includes("# rc") && !home.out.includes("PRIVATE-KEY"), home.out);
      ok(!home.out.includes("shadow"), `/etc is narrowed: ${home.out}`);
    });
  },
);

bwrapTest("workerBwrapArgv() lets nothing but the writable roots be written", async () => {
  await withBox(async (box) => {
    const plan = await planFor(box);
    const result = await inView(
      plan,
      {},
      `echo ok > new.txt && echo made; echo x > .git/HEAD; mkdir ${box.outside}; ` +
        `touch /usr/x /x ${box.root}/x; echo done`,
    );
    ok(result.out.includes("made") && result.out.includes("done"), result.out);
    equal(await Deno.readTextFile(join(box.ws, "new.txt")), "ok\n");
    equal(await Deno.readTextFile(join(box.ws, ".git/HEAD")), "ref: refs/heads/main\n");
    for (const path of ["/usr/x", "/x", join(box.root, "x")]) {
      ok(!(await Deno.lstat(path).then(() => true, () => false)), `${path} was created`);
    }
  });
});

bwrapTest(
  "workerBwrapArgv() shows granted folders: read ones read-only, write ones writable",
  async () => {
    await withBox(async (box) => {
      const plan = await planFor(box);
      const grants = {
        read: [box.ws, box.outside],
        write: [box.ws, box.home],
        net: [],
        env: [],
        run: [],
      };
      const result = await inView(
        { ...plan, writable: [box.ws, box.home] },
        { grants },
        `cat ${box.outside}/secret.txt; echo x > ${box.outside}/w || echo refused; ` +
          `echo y > ${box.home}/w && echo wrote`,
      );
      ok(result.out.includes("top secret"), result.out);
      ok(result.out.includes("refused") && result.out.includes("wrote"), result.out);
      equal(await Deno.readTextFile(join(box.home, "w")), "y\n");
    });
  },
);

bwrapTest(
  "workerBwrapArgv() hides tern's home in the workspace but for the audit file and the saved tool results",
  async () => {
    // The workspace is the home folder, so tern's home (hidden by the shell's view) lies in it
    // and holds the worker's audit file (writable) and the session's tool results (read grant).
    await withBox(async (box) => {
      const ternHome = join(box.ws, ".tern");
      const results = join(ternHome, "sessions", "p", "s1", "tool-results");
      const audit = join(ternHome, "audit", "deno-1.jsonl");
      await Deno.mkdir(results, { recursive: true });
      await Deno.mkdir(join(ternHome, "audit"));
      await Deno.writeTextFile(join(results, "call-1.txt"), "saved result");
      await Deno.writeTextFile(join(ternHome, "sessions", "p", "other.jsonl"), "other session");
      await Deno.writeTextFile(join(ternHome, "config.jsonc"), "{}");
      await Deno.writeTextFile(audit, "");
      const plan = await planFor(box, { hidden: [...secretLocations(box.home), ternHome] });
      const seen = await inView(
        plan,
        {
          grants: { read: [box.ws, results], write: [box.ws], net: [], env: [], run: [] },
          auditFile: audit,
        },
        `cat .tern/sessions/p/other.jsonl .tern/config.jsonc; ls .tern; ` +
          `cat ${results}/call-1.txt; echo line >> ${audit} && echo audited; ` +
          `echo x > .tern/new || echo refused; echo y > ${results}/new || echo refused-results`,
      );
      ok(!seen.out.includes("other session"), seen.out);
      ok(!seen.out.includes("{}"), seen.out);
      ok(seen.out.includes("saved result"), seen.out);
      ok(seen.out.includes("audited") && seen.out.includes("refused"), seen.out);
      ok(seen.out.includes("refused-results"), seen.out);
      equal(await Deno.readTextFile(audit), "line\n");
      ok(!(await Deno.lstat(join(ternHome, "new")).then(() => true, () => false)));
    });
  },
);

bwrapTest(
  "createSandbox() starts the worker with a grant when HOME is tern's home and holds Deno's cache",
  async () => {
    await withBox(async (box) => {
      // The person's HOME is tern's home, and Deno made its cache there (`~/.cache/deno`):
      // tern's home is hidden whole, so the cache's mount point cannot be made in it late.
      const home = join(box.root, "tern-home");
      await Deno.mkdir(join(home, ".cache", "deno"), { recursive: true });
      await Deno.mkdir(join(home, "sessions"));
      await Deno.writeTextFile(join(home, "sessions", "s.jsonl"), "a session");
      const runtime = await createSandbox({
        workspace: box.ws,
        profile: ":workspace",
        noSandbox: false,
        home,
        ternHome: home,
        env: { PATH: "/usr/bin:/bin", HOME: home },
        handlerUrl: new URL("../../src/tools/worker_handler.ts", import.meta.url),
        runId: "view-home-test",
        auditDir: join(home, "audit"),
      });
      try {
        await runtime.setExtraGrants({ read: [box.outside], write: [box.outside] });
        const signal = new AbortController().signal;
        const roots = { read: [box.outside], write: [box.outside] };
        const wrote = await runtime.worker!.call(
          "write",
          { path: `${box.outside}/granted.txt`, content: "granted" },
          { signal, roots },
        );
        equal(wrote.status, "SUCCEEDED", JSON.stringify(wrote));
        equal(await Deno.readTextFile(join(box.outside, "granted.txt")), "granted");
        const session = await runtime.worker!.call("read", {
          path: join(home, "sessions", "s.jsonl"),
        }, { signal });
        equal(session.status === "ERROR" && session.code, "POLICY_DENIED", JSON.stringify(session));
      } finally {
        await runtime.close();
      }
    });
  },
);

bwrapTest("createSandbox() starts the worker in bubblewrap and says so in explain()", async () => {
  await withBox(async (box) => {
    const runtime = await createSandbox({
      workspace: box.ws,
      profile: ":workspace",
      noSandbox: false,
      home: box.home,
      ternHome: join(box.root, "tern-home"),
      env: { PATH: "/usr/bin:/bin", HOME: box.home },
      handlerUrl: new URL("../../src/tools/worker_handler.ts", import.meta.url),
      runId: "view-test",
      auditDir: join(box.root, "audit"),
    });
    try {
      const explained = runtime.explain();
      equal(explained.workerKind, "bwrap");
      // bubblewrap, or (as root) the bash that joins the run's cgroups, then execs bubblewrap.
      const argv = explained.worker ?? [];
      ok(
        basename(argv[0]) === "bwrap" ||
          (basename(argv[0]) === "bash" && argv[3] === "tern-worker" &&
            basename(argv[4]) === "bwrap"),
        argv.join(" "),
      );
      const signal = new AbortController().signal;
      const read = await runtime.worker!.call("read", { path: "README.md" }, { signal });
      ok(read.status === "SUCCEEDED" && read.output.includes("hello"), JSON.stringify(read));
      // The audit file is written from inside the view.
      ok((await Deno.readTextFile(runtime.worker!.auditPath!)).includes('"permission"'));
      // What the view shows but the profile does not grant stays refused by the path checks.
      await Deno.symlink("/etc/passwd", join(box.ws, "passwd"));
      for (
        const [tool, args] of [
          ["read", { path: "/etc/passwd" }],
          ["read", { path: "passwd" }],
          ["list", { path: "/usr" }],
          ["write", { path: "/tmp/x.txt", content: "x" }],
        ] as const
      ) {
        const denied = await runtime.worker!.call(tool, args, { signal });
        equal(denied.status === "ERROR" && denied.code, "POLICY_DENIED", JSON.stringify(denied));
      }
      // A grant restarts the worker in a view that shows the granted folder.
      await runtime.setExtraGrants({ read: [box.outside] });
      const granted = await runtime.worker!.call("read", { path: `${box.outside}/secret.txt` }, {
        signal,
        roots: { read: [box.outside], write: [] },
      });
      ok(
        granted.status === "SUCCEEDED" && granted.output.includes("top secret"),
        JSON.stringify(granted),
      );
    } finally {
      await runtime.close();
    }
    // Stopping the worker ends bubblewrap and everything in it.
    await assertNoProcessWith(box.ws);
  });
});

Deno.test("createSandbox() without bubblewrap keeps the Deno-confined worker and says so", async () => {
  await withBox(async (box) => {
    const runtime = await createSandbox({
      workspace: box.ws,
      profile: ":workspace",
      noSandbox: false,
      home: box.home,
      ternHome: join(box.root, "tern-home"),
      env: { PATH: "/usr/bin:/bin", HOME: box.home },
      handlerUrl: new URL("../../src/tools/worker_handler.ts", import.meta.url),
      runId: "view-test",
      bwrapPath: join(box.root, "no-bwrap"),
    });
    try {
      const explained = runtime.explain();
      equal(explained.workerKind, "deno");
      ok(/rename|race/.test(explained.workerNote), explained.workerNote);
      ok(explained.worker?.[0] !== "bwrap" && explained.worker?.includes("run"));
      // Outside bubblewrap the worker may start no program, ripgrep included.
      ok(
        !explained.worker?.some((arg) => arg.startsWith("--allow-run")),
        explained.worker?.join(" "),
      );
      const signal = new AbortController().signal;
      const read = await runtime.worker!.call("read", { path: "README.md" }, { signal });
      ok(read.status === "SUCCEEDED" && read.output.includes("hello"), JSON.stringify(read));
      const found = await runtime.worker!.call("grep", { pattern: "hello" }, { signal });
      ok(found.status === "SUCCEEDED" && found.details?.kind === "matches", JSON.stringify(found));
      equal(found.details.engine, "javascript");
    } finally {
      await runtime.close();
    }
  });
});

Deno.test("workerPlan() keeps the shell's hidden and read-only paths unless a grant lies inside", () => {
  const plan: ShellPlan = {
    cwd: "/nowhere/ws",
    writable: ["/nowhere/ws"],
    readOnly: ["/nowhere/ws/.git", "/nowhere/home/.tern"],
    hidden: ["/nowhere/ws/.env", "/nowhere/home/.aws", "/nowhere/home/.ssh", "/run/docker.sock"],
    network: false,
    env: {},
  };
  const planned = workerPlan(plan, {
    grants: {
      read: ["/nowhere/ws", "/nowhere/home/.aws/config"],
      write: ["/nowhere/ws", "/tmp/tern-tmp-1"],
      net: [],
      env: [],
      run: [],
    },
    denoPath: "/nowhere/deno",
    denoDir: "/nowhere/cache",
    sourceRoot: null,
    auditFile: "/nowhere/home/.tern/audit/deno-1.jsonl",
  });
  // A grant inside /tmp names a host path the view's private /tmp does not show: not bound.
  deepEqual(planned.writable, ["/nowhere/ws", "/nowhere/home/.tern/audit/deno-1.jsonl"]);
  // .tern holds the audit file: binding it read-only would cover it; outside the writable
  // roots nothing is in the worker's view anyway.
  deepEqual(planned.readOnly, ["/nowhere/ws/.git"]);
  // .aws holds a grant: the grant wins; .ssh stays hidden only where the view shows its folder.
  deepEqual(planned.hidden, ["/nowhere/ws/.env"]);
});

Deno.test("workerPlan() leaves out a write grant the shell's plan left out as swapped for a link", () => {
  // The shell's plan (runtime.ts boundRoots) dropped /nowhere/ws/a/sub: a command replaced it by
  // a link, and `--bind` would follow it. The worker's view must not bring it back.
  const plan: ShellPlan = {
    cwd: "/nowhere/ws",
    writable: ["/nowhere/ws", "/nowhere/ws/b"],
    readOnly: [],
    hidden: [],
    network: false,
    env: {},
  };
  const planned = workerPlan(plan, {
    grants: {
      read: ["/nowhere/ws"],
      write: ["/nowhere/ws", "/nowhere/ws/a/sub", "/nowhere/ws/b", "/nowhere/other"],
      net: [],
      env: [],
      run: [],
    },
    denoPath: "/nowhere/deno",
    denoDir: "/nowhere/cache",
    sourceRoot: null,
  });
  deepEqual(planned.writable, ["/nowhere/ws", "/nowhere/ws/b", "/nowhere/other"]);
});
