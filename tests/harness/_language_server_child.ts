/**
 * A stand-in tern for language_server_test.ts: opens a `:workspace` sandbox in a Deno project
 * (with `--no-sandbox` as its argument, tern's `--no-sandbox`: the server runs unconfined),
 * lets `deno lsp` look at one file, prints `ready <server pid> <root>` and waits to be killed.
 * The server leaves a process of its own in the background (as a server's helpers would),
 * which does not end at its stdin's end.
 */
import { dirname, join } from "node:path";
import { EditDiagnostics } from "../../src/harness/diagnostics/edit_diagnostics.ts";
import { createSandbox } from "../../src/sandbox/runtime.ts";
import { READ_ALL } from "../support/read_all.ts";

const root = await Deno.realPath(
  await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_lsp_child_" }),
);
const ws = join(root, "ws");
await Deno.mkdir(ws);
await Deno.writeTextFile(join(ws, "deno.json"), "{}\n");
await Deno.writeTextFile(join(ws, "main.ts"), 'export const n: number = "one";\n');
const sandbox = await createSandbox({
  workspace: ws,
  profile: ":workspace",
  noSandbox: Deno.args.includes("--no-sandbox"),
  ternHome: join(root, "tern-home"),
  env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: root },
  home: root,
  handlerUrl: new URL("../../src/tools/worker_handler.ts", import.meta.url),
  runId: "lsp-child",
});
const diagnostics = new EditDiagnostics({
  workspace: ws,
  refuse: READ_ALL,
  path: `${dirname(Deno.execPath())}:/usr/local/bin:/usr/bin:/bin`,
  settings: { timeoutMs: 600_000 },
  shell: () =>
    Promise.resolve({
      run: sandbox.shell,
      kind: sandbox.shellKind,
      launch: (argv, launch) =>
        sandbox.serverLaunch(
          ["/bin/bash", "-c", 'sleep 3600 </dev/null & exec "$@"', "tern-test", ...argv],
          launch,
        ),
    }),
});
const note = await diagnostics.after(join(ws, "main.ts"));
const [server] = await diagnostics.servers();
if (server === undefined || !note?.includes("deno lsp")) {
  console.log(`failed ${note}`);
  Deno.exit(1);
}
console.log(`ready ${server.pid} ${root}`);
setInterval(() => {}, 60_000);
