/**
 * Diagnostics after edits: how long one check takes in a real `:workspace` sandbox (bubblewrap,
 * as a tool call's shell command runs), for each built-in checker this machine has, on a small
 * file with one error. What an edit's result waits (up to `diagnostics.waitMs`). Writes
 * bench/results/edit_diagnostics.md.
 *
 *   deno run -A bench/edit_diagnostics_bench.ts [runs]
 */
import { dirname, join } from "node:path";
import { EditDiagnostics } from "../src/harness/diagnostics/edit_diagnostics.ts";
import { createSandbox } from "../src/sandbox/runtime.ts";
import { type Stats, stats } from "./_stats.ts";

const RUNS = Number(Deno.args[0] ?? 5);
const root = await Deno.realPath(
  await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_diag_bench_" }),
);
const ws = join(root, "ws");
await Deno.mkdir(ws);
const path = `${dirname(Deno.execPath())}:/usr/local/bin:/usr/bin:/bin`;
const sandbox = await createSandbox({
  workspace: ws,
  profile: ":workspace",
  noSandbox: false,
  ternHome: join(root, "tern-home"),
  env: { PATH: path, HOME: join(root, "home") },
  home: join(root, "home"),
  handlerUrl: new URL("../src/tools/worker_handler.ts", import.meta.url),
  runId: "diag-bench",
});
const files: Record<string, string> = {
  "deno.json": "{}\n",
  "main.ts": 'export const n: number = "one";\n',
  "app.py": "def f(:\n    pass\n",
  "run.sh": "if then\nfi\n",
};
const rows: { file: string; checker: string; time: Stats }[] = [];
try {
  for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(join(ws, name), text);
  for (const name of ["main.ts", "app.py", "run.sh"]) {
    const times: number[] = [];
    let checker = "";
    for (let i = 0; i < RUNS; i++) {
      // A fresh instance each run: every check reports, none is "nothing new".
      const diagnostics = new EditDiagnostics({
        workspace: ws,
        refuse: () => undefined,
        path,
        settings: { timeoutMs: 600_000 },
        shell: () => Promise.resolve({ run: sandbox.shell, kind: sandbox.shellKind }),
      });
      const began = performance.now();
      const note = await diagnostics.after(join(ws, name));
      times.push(performance.now() - began);
      if (!note?.includes("1 new error")) throw new Error(`${name}: ${note}`);
      checker = /^Diagnostics \(([^)]+)\)/.exec(note)![1];
    }
    rows.push({ file: name, checker, time: stats(times) });
  }
} finally {
  await sandbox.close();
  await Deno.remove(root, { recursive: true });
}
const ms = (n: number) => `${Math.round(n)} ms`;
const load = Deno.readTextFileSync("/proc/loadavg").split(" ")[0];
const text = [
  "# Diagnostics after edits: one check in the sandbox",
  "",
  `${
    new Date().toISOString().slice(0, 10)
  }, \`deno run -A bench/edit_diagnostics_bench.ts ${RUNS}\`, ` +
  `Deno ${Deno.version.deno}, shell: ${sandbox.shellKind}; a 2-core machine shared with other work ` +
  `(load average ${load}). The same \`deno check\` on the host at the same load took about as long.`,
  "",
  "| file | checker | median | p90 | min |",
  "| --- | --- | ---: | ---: | ---: |",
  ...rows.map((r) =>
    `| ${r.file} | ${r.checker} | ${ms(r.time.median)} | ${ms(r.time.p90)} | ${ms(r.time.min)} |`
  ),
  "",
].join("\n");
console.log(text);
await Deno.writeTextFile(new URL("./results/edit_diagnostics.md", import.meta.url), text);
