/** The measurements of bench/sandbox_layers_bench.ts. */
import { join } from "node:path";
import {
  bashArgv,
  bwrapArgs,
  bwrapArgvFor,
  KERNEL_WRITABLE,
  launchArgv,
  probeBwrap,
  sandboxEnv,
} from "../src/sandbox/bwrap.ts";
import { runProxied } from "../src/sandbox/net_shell.ts";
import { createBwrapRunner } from "../src/sandbox/shell_runner.ts";
import { homeView } from "../src/sandbox/home_view.ts";
import { hostPrivatePaths, privateView, rootOnlyPaths } from "../src/sandbox/host_private.ts";
import { snapshotHostFiles } from "../src/sandbox/persistence.ts";
import { runInProcessGroup } from "../src/sandbox/process.ts";
import { gitDirsUnder, secretLocations } from "../src/sandbox/protected_paths.ts";
import { seccompFile } from "../src/sandbox/seccomp.ts";
import { shellEnv } from "../src/sandbox/shell_env.ts";
import type { ShellPlan } from "../src/sandbox/types.ts";
import { type Stats, stats, timeCalls, timeInterleaved } from "./_sandbox_measure.ts";

const WARMUP = 5;

/**
 * Runs `echo hi` as `plan` says; `launcher` false starts bubblewrap directly (the old way),
 * `limits` false leaves out the head of the command's shell (rlimits, liveness check), `fork`
 * starts it with Deno's `detached: true` (a fork() of this process) instead of `setsid`.
 */
function runner(
  plan: ShellPlan,
  options: { launcher: boolean; kernel: boolean; bare?: boolean; limits?: boolean; fork?: boolean },
) {
  let args = options.bare
    ? ["--ro-bind", "/", "/", "--", "bash", "-c", "echo hi"]
    : options.limits === false
    ? bwrapArgvFor(plan, bashArgv("echo hi"))
    : bwrapArgs(plan, "echo hi");
  if (!options.kernel) {
    const kept: string[] = [];
    for (let i = 0; i < args.length; i++) {
      if (args[i] === "--ro-bind-try" && KERNEL_WRITABLE.includes(args[i + 1])) i += 2;
      else kept.push(args[i]);
    }
    args = kept;
  }
  const launch = options.launcher ? launchArgv(plan, args) : { program: "bwrap", args };
  if (options.fork) {
    return async () => {
      const child = new Deno.Command(launch.program, {
        args: launch.args,
        cwd: "/",
        env: sandboxEnv(plan),
        clearEnv: true,
        // The launcher's stdin is tern's liveness pipe: at end-of-file the command exits.
        stdin: "piped",
        stdout: "piped",
        stderr: "null",
        detached: true,
      }).spawn();
      const out = await child.output();
      await child.stdin.close().catch(() => {});
      const text = new TextDecoder().decode(out.stdout);
      if (text !== "hi\n") throw new Error(`Cannot benchmark: got "${text}"`);
    };
  }
  return async () => {
    const result = await runInProcessGroup(launch.program, {
      args: launch.args,
      cwd: "/",
      env: sandboxEnv(plan),
      // As tern runs it: the launcher moves the pipe to LIVENESS_FD (see bwrap.ts).
      livenessPipe: options.launcher,
    });
    if (result.output !== "hi\n") throw new Error(`Cannot benchmark: got "${result.output}"`);
  };
}

async function makeHome(root: string): Promise<string> {
  const home = join(root, "home");
  for (const dir of [".cache/pip", ".npm", ".cargo/bin", ".rustup", ".config/git", ".ssh"]) {
    await Deno.mkdir(join(home, dir), { recursive: true });
  }
  await Deno.writeTextFile(join(home, ".gitconfig"), "[user]\n");
  await Deno.writeTextFile(join(home, ".ssh/id_rsa"), "key\n");
  return home;
}

/** Runs the benchmark; `args[0]` is the number of timed commands per variant (default 40). */
export async function runLayersBench(args: readonly string[]): Promise<void> {
  const runs = Number(args[0] ?? 40);
  const probe = await probeBwrap();
  if (!probe.ok) throw new Error(`Cannot benchmark the shell sandbox: ${probe.reason}`);
  const root = await Deno.realPath(
    await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_layers_" }),
  );
  try {
    const home = await makeHome(root);
    const ws = join(home, "projects", "app");
    await Deno.mkdir(ws, { recursive: true });
    const tmp = join(root, "tmp");
    await Deno.mkdir(tmp);
    const ternHome = join(root, "tern-home");

    const once: Record<string, Stats> = {};
    let filter: string | null = null;
    once.seccompFile = stats(
      await timeCalls(10, 1, async () => {
        filter = await seccompFile(ternHome);
      }),
    );
    let rootOnly: string[] = [];
    const isRoot = Deno.uid() === 0;
    if (isRoot) {
      once["rootOnlyPaths (JavaScript walk, blocks)"] = stats(
        await timeCalls(5, 1, () => {
          rootOnlyPaths();
          return Promise.resolve();
        }),
      );
      once["hostPrivatePaths (find, in the background)"] = stats(
        await timeCalls(5, 1, async () => {
          rootOnly = await hostPrivatePaths();
        }),
      );
    }
    const git = await gitDirsUnder([ws]);
    once.snapshotHostFiles = stats(
      await timeCalls(200, 10, () => {
        snapshotHostFiles(ws, git);
        return Promise.resolve();
      }),
    );

    const base: ShellPlan = {
      cwd: ws,
      writable: [ws],
      readOnly: [...git, join(ws, ".tern")],
      hidden: [...secretLocations(home), ternHome],
      network: false,
      env: shellEnv({ PATH: "/usr/local/bin:/usr/bin:/bin", HOME: home }),
    };
    const view = homeView(home, { ternHome });
    const hiddenRoot = privateView(rootOnly, [ws, home]);
    const withSeccomp = filter === null ? base : { ...base, seccomp: filter };
    const withHome = { ...withSeccomp, masked: view.masked, visible: view.visible };
    const withRoot = {
      ...withHome,
      masked: [...view.masked, ...hiddenRoot.masked],
      hidden: [...withHome.hidden, ...hiddenRoot.hidden],
    };
    const withGuards = { ...withRoot, guarded: [join(ws, ".tern"), join(ws, ".git")] };
    const bare = runner(base, { launcher: false, kernel: false, bare: true });
    const socketDir = await Deno.makeTempDir({ prefix: "tern-layers-proxy-" });
    let proxied = 0;
    const withProxy = async () => {
      const result = await runProxied(
        withGuards,
        ["example.com"],
        (plan) => createBwrapRunner(plan)("echo hi", { cwd: ws }),
        { socketDir, name: String(++proxied) },
      );
      if (result.output !== "hi\n") throw new Error(`Cannot benchmark: got "${result.output}"`);
    };
    const variants: Array<[string, () => Promise<void>]> = [
      ["bwrap --ro-bind / / (this machine's floor)", bare],
      [
        "bwrap, the old view (sized /tmp), no rlimits",
        runner(base, { launcher: false, kernel: false, limits: false }),
      ],
      ["+ rlimits, liveness check", runner(base, { launcher: false, kernel: false })],
      ["+ /proc/sys & co read-only", runner(base, { launcher: false, kernel: true })],
      ["+ launcher (closes fds)", runner(base, { launcher: true, kernel: true })],
      ["+ seccomp filter", runner(withSeccomp, { launcher: true, kernel: true })],
      ["+ home allowlist", runner(withHome, { launcher: true, kernel: true })],
      [
        `+ root-only hidden (${rootOnly.length})`,
        runner(withRoot, { launcher: true, kernel: true }),
      ],
      ["+ .tern/.git guards (all layers)", runner(withGuards, { launcher: true, kernel: true })],
      [
        "all layers, started by fork() (Deno's detached, before)",
        runner(withGuards, { launcher: true, kernel: true, fork: true }),
      ],
      ["all layers + one host granted (proxy and forwarder)", withProxy],
    ];
    const times = await timeInterleaved(runs, WARMUP, variants.map(([, fn]) => fn));
    await Deno.remove(socketDir, { recursive: true });
    const perCommand = Object.fromEntries(variants.map(([name], i) => [name, stats(times[i])]));
    const result = {
      date: new Date().toISOString(),
      bwrap: probe.version,
      root: isRoot,
      runs,
      loadAverage: Deno.loadavg(),
      perCommand,
      once,
    };
    const lines = [
      "# Shell sandbox layers",
      "",
      `${result.date}, bubblewrap ${probe.version}, ${isRoot ? "as root" : "not root"}, ` +
      `${runs} runs each, load ${result.loadAverage.map((n) => n.toFixed(1)).join(" ")}`,
      "",
      "| per command (`echo hi`) | median ms | p90 ms |",
      "|---|---|---|",
      ...Object.entries(perCommand).map(([name, s]) =>
        `| ${name} | ${s.median.toFixed(2)} | ${s.p90.toFixed(2)} |`
      ),
      "",
      "| once | median ms |",
      "|---|---|",
      ...Object.entries(once).map(([name, s]) => `| ${name} | ${s.median.toFixed(3)} |`),
    ];
    await Deno.mkdir(new URL("./results/", import.meta.url), { recursive: true });
    await Deno.writeTextFile(
      new URL("./results/sandbox_layers.json", import.meta.url),
      JSON.stringify(result, null, 2) + "\n",
    );
    await Deno.writeTextFile(
      new URL("./results/sandbox_layers.md", import.meta.url),
      lines.join("\n") + "\n",
    );
    console.log(lines.join("\n"));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}
