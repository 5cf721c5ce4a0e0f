/**
 * How a packaged tern starts its own parts: the command lines for the tree, the single file and
 * a compiled binary (which can be built only where Deno's denort runtime is at hand, so its
 * command lines are checked here), and the files a packaged build carries.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  carries,
  embeddedFile,
  ENTRY_FLAG,
  ENTRY_SOURCES,
  entryArgv,
  type EntryName,
  type Packaging,
  packaging,
  setPackaging,
  ternCommand,
  wasmRuntimeOptions,
} from "../../src/core/packaging.ts";
import { sourceUrl } from "../../src/core/source_url.ts";
import {
  defaultConfigPath,
  ungrantedKinds,
  workerRunArgs,
} from "../../src/sandbox/worker/flags.ts";
import { proxyArgv } from "../../src/sandbox/net_proxy.ts";
import { webRequestArgv } from "../../src/tools/web_transport.ts";

const SINGLE: Packaging = { kind: "single-file", file: "/opt/tern.js", runFlags: ["--allow-read"] };

/** Runs `fn` with the packaging set to `packaged`, then back to the tree. */
function packagedAs(packaged: Packaging, fn: () => void) {
  setPackaging(packaged);
  try {
    fn();
  } finally {
    setPackaging({ kind: "tree" });
  }
}

Deno.test("entryArgv() runs each entry's source file from the tree", async () => {
  equal(packaging().kind, "tree");
  for (const name of Object.keys(ENTRY_SOURCES) as EntryName[]) {
    const path = fileURLToPath(sourceUrl(ENTRY_SOURCES[name]));
    ok((await Deno.stat(path)).isFile, path);
    deepEqual(entryArgv(name, ["--no-prompt"], ["a"], "/deno"), [
      "/deno",
      "run",
      "--no-prompt",
      path,
      "a",
    ]);
  }
});

Deno.test("entryArgv() runs the single file itself with --tern-entry and the Deno flags", () => {
  packagedAs(SINGLE, () => {
    deepEqual(entryArgv("net-proxy", ["--no-prompt", "--no-config"], ["/s", "h:1"], "/deno"), [
      "/deno",
      "run",
      "--no-prompt",
      "--no-config",
      "/opt/tern.js",
      ENTRY_FLAG,
      "net-proxy",
      "/s",
      "h:1",
    ]);
    // Its helpers need no deno.json: all they import is inside the file.
    equal(defaultConfigPath(), null);
    const proxy = proxyArgv("/s", ["example.com:443"], "/deno");
    deepEqual(proxy.slice(-5), ["/opt/tern.js", ENTRY_FLAG, "net-proxy", "/s", "example.com:443"]);
    ok(proxy.includes("--allow-net=example.com:443,unix:/s"));
    const web = webRequestArgv("/deno");
    deepEqual(web.slice(-3), ["/opt/tern.js", ENTRY_FLAG, "web-request"]);
    ok(web.includes("--no-config"));
  });
});

Deno.test("entryArgv() starts a compiled binary as itself, without Deno flags", () => {
  packagedAs({ kind: "compiled" }, () => {
    deepEqual(entryArgv("rewind-restore", ["--allow-write=/w"], [], "/deno"), [
      Deno.execPath(),
      ENTRY_FLAG,
      "rewind-restore",
    ]);
  });
});

Deno.test("workerRunArgs() starts the packaged tool worker as the same file or executable", () => {
  const grants = { read: ["/w"], write: ["/w"], net: [], env: [], run: [] };
  const handlerUrl = new URL("file:///elsewhere/handler.ts");
  packagedAs(SINGLE, () => {
    const args = workerRunArgs({ grants, handlerUrl });
    deepEqual(args.slice(0, 4), ["run", "--no-prompt", "--allow-read=/w", "--allow-write=/w"]);
    ok(args.includes("--no-config"));
    deepEqual(args.slice(-3), ["/opt/tern.js", ENTRY_FLAG, "tool-worker"]);
    ok(!args.some((arg) => arg.startsWith("data:")));
  });
  packagedAs({ kind: "compiled" }, () => {
    const args = workerRunArgs({ grants, handlerUrl });
    // The permission flags follow as arguments: the worker revokes what they leave out.
    deepEqual(args.slice(0, 5), [
      ENTRY_FLAG,
      "tool-worker",
      "--no-prompt",
      "--allow-read=/w",
      "--allow-write=/w",
    ]);
    deepEqual(ungrantedKinds(args.slice(2)), ["net", "run", "sys", "ffi"]);
  });
});

Deno.test("ungrantedKinds() names every kind no flag grants, whole or in part", () => {
  deepEqual(ungrantedKinds(["--no-prompt"]), ["read", "write", "net", "env", "run", "sys", "ffi"]);
  deepEqual(
    ungrantedKinds([
      "--allow-read",
      "--allow-write",
      "--allow-net",
      "--allow-env",
      "--allow-run",
      "--deny-ffi",
    ]),
    ["sys", "ffi"],
  );
  // A deny flag or a look-alike name grants nothing.
  deepEqual(ungrantedKinds(["--deny-write=/x", "--allow-networks"]), [
    "read",
    "write",
    "net",
    "env",
    "run",
    "sys",
    "ffi",
  ]);
});

Deno.test("ternCommand() starts a subagent as bin/tern, the same file with its flags, or the binary", () => {
  deepEqual(ternCommand(() => "/repo/bin/tern"), { command: "/repo/bin/tern", args: [] });
  packagedAs(SINGLE, () => {
    deepEqual(ternCommand(() => "/unused"), {
      command: Deno.execPath(),
      args: ["run", "--allow-read", "/opt/tern.js"],
    });
  });
  packagedAs({ kind: "compiled" }, () => {
    deepEqual(ternCommand(() => "/unused"), { command: Deno.execPath(), args: [] });
  });
});

Deno.test("embeddedFile() gives back the bytes a packaged build carries, and nothing else", async () => {
  equal(await embeddedFile("tree-sitter.wasm"), null);
  equal(await wasmRuntimeOptions(), undefined);
  const wasm = new Uint8Array([0, 97, 115, 109, 255]);
  const gzipped = new Uint8Array(
    await new Response(new Blob([wasm]).stream().pipeThrough(new CompressionStream("gzip")))
      .arrayBuffer(),
  );
  setPackaging(SINGLE, { "tree-sitter.wasm": btoa(String.fromCharCode(...gzipped)) });
  try {
    deepEqual(await embeddedFile("tree-sitter.wasm"), wasm);
    ok(carries("tree-sitter.wasm"));
    ok(!carries("tree-sitter-python.wasm"));
    equal(await embeddedFile("toString"), null);
    deepEqual((await wasmRuntimeOptions())!.wasmBinary, wasm);
  } finally {
    setPackaging({ kind: "tree" });
  }
  ok(!carries("tree-sitter.wasm"));
});

Deno.test("entryArgs() drops --tern-entry and its name only", async () => {
  const script = `import { entryArgs } from ${
    JSON.stringify(
      new URL("../../src/core/packaging.ts", import.meta.url).href,
    )
  };\nconsole.log(JSON.stringify(entryArgs()));\n`;
  const file = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(file, script);
    const argsOf = async (args: string[]) => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--no-prompt", "--quiet", "--no-config", file, ...args],
        stdout: "piped",
        stderr: "inherit",
      }).output();
      return JSON.parse(new TextDecoder().decode(out.stdout));
    };
    deepEqual(await argsOf([ENTRY_FLAG, "net-proxy", "/s", "a.com"]), ["/s", "a.com"]);
    deepEqual(await argsOf(["/s", ENTRY_FLAG]), ["/s", ENTRY_FLAG]);
  } finally {
    await Deno.remove(file);
  }
});
