/**
 * tern's own code, the Deno that runs it and Deno's cache stay read-only to every tool when a
 * writable folder holds them (src/sandbox/own_code.ts): here the workspace is this checkout
 * itself, as when a person works on tern with tern. Commands and the file tools try to change
 * what tern runs (a lazily loaded chunk, the launcher subagents start through, Deno) and must
 * fail, while the rest of the checkout stays writable.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { OWN_CODE_ENTRIES, ownCodePaths } from "../../src/sandbox/own_code.ts";
import { createSandbox } from "../../src/sandbox/runtime.ts";
import { bwrapTest, sandboxOptionsFor } from "./_bwrap_helpers.ts";

const checkout = await Deno.realPath(fileURLToPath(new URL("../../", import.meta.url)));

const exists = (path: string) => Deno.lstat(path).then(() => true, () => false);

Deno.test("ownCodePaths() names the checkout's code, Deno and Deno's cache", () => {
  const paths = ownCodePaths({ DENO_DIR: "/opt/deno-cache", HOME: "/home/x" });
  for (const entry of OWN_CODE_ENTRIES) ok(paths.includes(join(checkout, entry)), entry);
  ok(paths.includes(Deno.execPath()), "the Deno executable");
  ok(paths.includes("/opt/deno-cache"), "DENO_DIR");
  ok(!paths.includes(join(checkout, "tests")), "tests are ordinary workspace");
  // What Deno reads at the checkout's root when it starts tern, there or not: a command that
  // wrote one could point Deno's npm fetches elsewhere (.npmrc) or change how it loads tern.
  for (const file of ["package.json", ".npmrc", "deno.jsonc", "tsconfig.json"]) {
    ok(paths.includes(join(checkout, file)), file);
  }
  ok(ownCodePaths({ HOME: "/home/x" }).includes("/home/x/.cache/deno"), "Deno's default cache");
  ok(ownCodePaths({ XDG_CACHE_HOME: "/c" }).includes("/c/deno"), "XDG_CACHE_HOME");
});

bwrapTest(
  "a workspace holding tern's checkout: commands and file tools cannot change tern's code",
  async () => {
    const root = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_own_code_" });
    const probe = `tern-own-code-probe-${crypto.randomUUID()}`;
    // Where a write would land if the protection failed: removed whatever happens.
    const targets = ["src", "bin", ".tools", "node_modules", "."].map((dir) =>
      join(checkout, dir, probe)
    );
    const denoDir = join(checkout, ".tools", "deno");
    // What a failed protection would change, put back at the end.
    const originals = new Map<string, string>();
    for (const file of ["main.ts", "bin/tern"]) {
      originals.set(join(checkout, file), await Deno.readTextFile(join(checkout, file)));
    }
    const mainBefore = originals.get(join(checkout, "main.ts"));
    const runtime = await createSandbox(
      sandboxOptionsFor(root, checkout, "own-code-test", {
        env: { PATH: "/usr/bin:/bin", HOME: root, DENO_DIR: denoDir },
      }),
    );
    try {
      equal(runtime.shellKind, "bwrap");
      const run = (command: string) => runtime.shell(command, { cwd: checkout, timeoutMs: 30_000 });
      const attempt = await run(
        `for f in src bin .tools node_modules; do touch "$f/${probe}" 2>/dev/null && echo "wrote $f"; done; ` +
          `{ echo '// x' >> main.ts; } 2>/dev/null && echo "wrote main.ts"; ` +
          `mv bin/tern "bin/${probe}" 2>/dev/null && echo "moved bin/tern"; ` +
          `touch "${probe}" && echo "wrote the checkout"`,
      );
      equal(attempt.output.trim(), "wrote the checkout", attempt.output);
      equal(await Deno.readTextFile(join(checkout, "main.ts")), mainBefore);
      deepEqual(
        await Promise.all(targets.slice(0, 4).map(exists)),
        [false, false, false, false],
      );
      ok(await exists(join(checkout, "src", "sandbox", "own_code.ts")), "src is where it was");
      // The Deno executable and its cache, wherever the checkout keeps them.
      const deno = await run(
        `touch ${JSON.stringify(Deno.execPath())} 2>/dev/null && echo "touched deno"; ` +
          `touch ${JSON.stringify(join(denoDir, probe))} 2>/dev/null && echo "wrote the cache"; ` +
          "echo done",
      );
      equal(deno.output.trim(), "done", deno.output);
      // `tern sandbox explain` names them, and the worker's flags deny them.
      const explained = runtime.explain();
      ok(explained.layers?.guards.ownCode.includes(join(checkout, "src")), "layers name src");
      ok(
        (explained.worker ?? []).some((flag) =>
          flag.startsWith("--deny-write=") &&
          flag.includes(join(checkout, "bin"))
        ),
        String(explained.worker),
      );
      const signal = new AbortController().signal;
      const roots = { read: [], write: [] };
      const written = await runtime.worker!.call(
        "write",
        { path: `src/${probe}`, content: "pwned" },
        { signal, roots },
      );
      equal(written.status, "ERROR", JSON.stringify(written));
      // Said as what it is: no request can lift it.
      ok(
        written.status === "ERROR" && /never allows write access .*belongs to tern itself/
          .test(written.message),
        JSON.stringify(written),
      );
      equal(await exists(join(checkout, "src", probe)), false);
      const edited = await runtime.worker!.call(
        "write",
        { path: `bin/tern`, content: "#!/bin/sh\necho pwned\n" },
        { signal, roots },
      );
      equal(edited.status, "ERROR", JSON.stringify(edited));
      ok(!(await Deno.readTextFile(join(checkout, "bin", "tern"))).includes("pwned"));
      // Nor one Deno reads at the root when it starts tern, not there yet (an .npmrc sending
      // the next package fetch, with a key, to another registry).
      const npmrc = await runtime.worker!.call(
        "write",
        { path: ".npmrc", content: "; tern own-code probe\n" },
        { signal, roots },
      );
      equal(npmrc.status, "ERROR", JSON.stringify(npmrc));
      equal(await exists(join(checkout, ".npmrc")), false);
      // The rest of the checkout is the person's workspace as any other.
      const ordinary = await runtime.worker!.call(
        "write",
        { path: `${probe}.md`, content: "notes" },
        { signal, roots },
      );
      equal(ordinary.status, "SUCCEEDED", JSON.stringify(ordinary));
    } finally {
      await runtime.close();
      // Put back what a failed protection changed.
      if (await exists(join(checkout, "bin", probe))) {
        await Deno.rename(join(checkout, "bin", probe), join(checkout, "bin", "tern"));
      }
      for (const [file, text] of originals) {
        if (await Deno.readTextFile(file) !== text) await Deno.writeTextFile(file, text);
      }
      // Only a probe of this test's own could be there: the checkout has no .npmrc.
      const npmrc = join(checkout, ".npmrc");
      if ((await Deno.readTextFile(npmrc).catch(() => "")) === "; tern own-code probe\n") {
        await Deno.remove(npmrc);
      }
      for (const path of [...targets, join(checkout, `${probe}.md`), join(denoDir, probe)]) {
        await Deno.remove(path, { recursive: true }).catch(() => {});
      }
      await Deno.remove(root, { recursive: true });
    }
  },
);

bwrapTest(
  "a sandbox whose roots hold none of tern's code still denies the worker writes to it: a later grant may",
  async () => {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern_own_code_" }));
    const ws = join(root, "ws");
    await Deno.mkdir(ws);
    const runtime = await createSandbox(sandboxOptionsFor(root, ws, "own-code-later"));
    try {
      await runtime.setExtraGrants({ write: [checkout] });
      const flags = runtime.explain().worker ?? [];
      const deny = flags.find((flag) => flag.startsWith("--deny-write=")) ?? "";
      for (const entry of ["src", "bin", ".tools"]) {
        ok(deny.split(/[=,]/).includes(join(checkout, entry)), `${entry}: ${deny}`);
      }
    } finally {
      await runtime.close();
      await Deno.remove(root, { recursive: true });
    }
  },
);

/** A sandbox made by the tern of the checkout `copy` for that checkout: a command's output. */
const PROBE = `import { createSandbox } from "./src/sandbox/runtime.ts";
const ws = new URL(".", import.meta.url).pathname.replace(/\\/$/, "");
const [home, command] = Deno.args;
const runtime = await createSandbox({
  workspace: ws, profile: ":workspace", noSandbox: false, ternHome: home + "/tern-home",
  env: { PATH: "/usr/bin:/bin", HOME: home }, home,
  handlerUrl: new URL("./src/tools/worker_handler.ts", import.meta.url), runId: "own-code-copy",
});
try {
  console.log((await runtime.shell(command, { cwd: ws, timeoutMs: 30_000 })).output);
} finally {
  await runtime.close();
}
`;

bwrapTest(
  "a checkout with a package.json, .npmrc, tsconfig.json and deno.jsonc: commands cannot change them",
  async () => {
    // A copy of this checkout's layout (a fork that has them), running its own copy of tern.
    const root = await Deno.realPath(
      await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_own_code_copy_" }),
    );
    const copy = join(root, "tern");
    try {
      await Deno.mkdir(join(root, "home"));
      await Deno.mkdir(copy);
      const cp = await new Deno.Command("cp", {
        args: [
          "-r",
          ...["src", "main.ts", "deno.json", "deno.lock"].map((f) => join(checkout, f)),
          copy,
        ],
      }).output();
      equal(cp.code, 0, new TextDecoder().decode(cp.stderr));
      await Deno.symlink(join(checkout, "node_modules"), join(copy, "node_modules"));
      const files = ["package.json", ".npmrc", "tsconfig.json", "deno.jsonc"];
      for (const file of files) await Deno.writeTextFile(join(copy, file), "{}\n");
      await Deno.writeTextFile(join(copy, "probe.ts"), PROBE);
      const command = `for f in ${files.join(" ")} notes.md; do ` +
        `{ echo x >> "$f"; } 2>/dev/null && echo "wrote $f"; done; echo done`;
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--no-prompt",
          "--allow-all",
          "--quiet",
          "--cached-only",
          "--config",
          join(copy, "deno.json"),
          join(copy, "probe.ts"),
          join(root, "home"),
          command,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const decoder = new TextDecoder();
      equal(out.code, 0, decoder.decode(out.stderr));
      equal(decoder.decode(out.stdout).trim(), "wrote notes.md\ndone");
      for (const file of files) equal(await Deno.readTextFile(join(copy, file)), "{}\n", file);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
);
