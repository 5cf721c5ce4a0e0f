/**
 * Diagnostics after edits: how long an edit's result waits for its diagnostics from a warm
 * language server (`deno lsp`, kept running in a real `:workspace` sandbox) against the
 * one-shot checker (`deno check` in the same sandbox), on a small Deno project, edits that
 * bring in a type error and fix it in turn. The first edit of the server (its start) is shown
 * apart. Writes bench/results/lsp_diagnostics.md.
 *
 *   deno run -A bench/lsp_diagnostics_bench.ts [edits]
 */
import { dirname, join } from "node:path";
import { EditDiagnostics } from "../src/harness/diagnostics/edit_diagnostics.ts";
import { createSandbox } from "../src/sandbox/runtime.ts";
import { type Stats, stats } from "./_stats.ts";

const EDITS = Number(Deno.args[0] ?? 8);
const root = await Deno.realPath(
  await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_lsp_bench_" }),
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
  runId: "lsp-bench",
});
const file = join(ws, "main.ts");
const texts = [
  'import { helper } from "./helper.ts";\nexport const n: number = helper("one");\n',
  'import { helper } from "./helper.ts";\nexport const n: number = helper(1);\n',
];

function diagnosticsFor(languageServers: boolean): EditDiagnostics {
  return new EditDiagnostics({
    workspace: ws,
    refuse: () => undefined,
    path,
    settings: { timeoutMs: 600_000, languageServers },
    shell: () =>
      Promise.resolve({
        run: sandbox.shell,
        kind: sandbox.shellKind,
        launch: (argv, launch) => sandbox.serverLaunch(argv, launch),
      }),
  });
}

/** The time of each edit's `after()`, alternating a type error and its fix; checks the notes. */
async function edits(diagnostics: EditDiagnostics, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    await Deno.writeTextFile(file, texts[i % 2]);
    const began = performance.now();
    const note = (await diagnostics.after(file)) ?? "";
    times.push(performance.now() - began);
    const want = i % 2 === 0 ? "1 new error" : "none now";
    if (!note.includes(want)) throw new Error(`edit ${i}: expected "${want}": ${note}`);
  }
  return times;
}

const rows: { how: string; time: Stats }[] = [];
let first = 0;
try {
  await Deno.writeTextFile(join(ws, "deno.json"), "{}\n");
  await Deno.writeTextFile(
    join(ws, "helper.ts"),
    "export function helper(x: number): number {\n  return x * 2;\n}\n",
  );
  await Deno.writeTextFile(file, texts[1]);
  const warm = diagnosticsFor(true);
  try {
    const began = performance.now();
    await warm.after(file);
    first = performance.now() - began;
    if ((await warm.servers()).length !== 1) throw new Error("no language server started");
    rows.push({ how: "deno lsp, warm (2nd edit on)", time: stats(await edits(warm, EDITS)) });
  } finally {
    await warm.close();
  }
  const oneShot = diagnosticsFor(false);
  await oneShot.after(file);
  rows.push({ how: "deno check, one-shot", time: stats(await edits(oneShot, EDITS)) });
} finally {
  await sandbox.close();
  await Deno.remove(root, { recursive: true });
}
const ms = (n: number) => `${Math.round(n)} ms`;
const load = Deno.readTextFileSync("/proc/loadavg").split(" ")[0];
const text = [
  "# Diagnostics after edits: warm language server against the one-shot checker",
  "",
  `${
    new Date().toISOString().slice(0, 10)
  }, \`deno run -A bench/lsp_diagnostics_bench.ts ${EDITS}\`, ` +
  `Deno ${Deno.version.deno}, shell: ${sandbox.shellKind}; a 2-core machine shared with other work ` +
  `(load average ${load}). ${EDITS} edits each, a type error brought in and fixed in turn, in a ` +
  "two-file Deno project; the time is what an edit's result waits (`EditDiagnostics.after()`).",
  "",
  "| diagnostics from | median | p90 | min |",
  "| --- | ---: | ---: | ---: |",
  ...rows.map((r) => `| ${r.how} | ${ms(r.time.median)} | ${ms(r.time.p90)} | ${ms(r.time.min)} |`),
  "",
  `The server's first edit (its start in the sandbox, initialize, the first check): ${ms(first)}.`,
  "",
].join("\n");
console.log(text);
await Deno.writeTextFile(new URL("./results/lsp_diagnostics.md", import.meta.url), text);
