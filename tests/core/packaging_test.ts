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
  workspaceAbove,
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

Deno.test("workspaceAbove() finds a Deno workspace in a folder above the checkout, as named or by real path", async () => {
  const above = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-above-" }));
  try {
    const config = `${above}/a/tern/deno.json`;
    await Deno.mkdir(`${above}/a/tern`, { recursive: true });
    await Deno.writeTextFile(config, "{}\n");
    equal(workspaceAbove(config), null);
    // Neither a deno.json that names no workspace nor one in the checkout itself counts.
    await Deno.writeTextFile(`${above}/a/deno.json`, '{ "tasks": {} }\n');
    await Deno.writeTextFile(`${above}/a/tern/deno.jsonc`, '{ "workspace": [] }\n');
    equal(workspaceAbove(config), null);
    await Deno.writeTextFile(`${above}/deno.jsonc`, '{ "workspace": ["./a/tern"] }\n');
    equal(workspaceAbove(config), `${above}/deno.jsonc`);
    // Reached through a link: the folders above the real checkout count too.
    await Deno.mkdir(`${above}/b`);
    await Deno.symlink(`${above}/a/tern`, `${above}/b/tern`);
    await Deno.remove(`${above}/deno.jsonc`);
    await Deno.writeTextFile(`${above}/a/deno.json`, '{ "workspace": ["./tern"] }\n');
    equal(workspaceAbove(`${above}/b/tern/deno.json`), `${above}/a/deno.json`);
  } finally {
    await Deno.remove(above, { recursive: true });
  }
});

Deno.test("entryArgv() from the tree reads no config under a Deno workspace above the checkout", async () => {
  // A checkout of its own (the modules entryArgv() needs, a deno.json) in a folder a workspace
  // that holds it would let commands write.
  const above = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-above-" }));
  try {
    await Deno.mkdir(`${above}/tern/src/core`, { recursive: true });
    for (const file of ["packaging.ts", "file_url.ts", "source_url.ts"]) {
      await Deno.copyFile(
        fileURLToPath(sourceUrl(`src/core/${file}`)),
        `${above}/tern/src/core/${file}`,
      );
    }
    await Deno.writeTextFile(`${above}/tern/deno.json`, "{}\n");
    const script = `${above}/start.ts`;
    const config = `${above}/tern/deno.json`;
    await Deno.writeTextFile(
      script,
      `import { entryArgv } from "./tern/src/core/packaging.ts";\n` +
        `const flags = ["--quiet", "--config", ${JSON.stringify(config)}, "--allow-net"];\n` +
        `console.log(JSON.stringify(entryArgv("web-request", flags, ["a"], "deno")));\n`,
    );
    const start = async () => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--no-prompt", "--quiet", "--no-config", "--allow-read", script],
        stdout: "piped",
        stderr: "inherit",
      }).output();
      return JSON.parse(new TextDecoder().decode(out.stdout));
    };
    const source = `${above}/tern/${ENTRY_SOURCES["web-request"]}`;
    deepEqual(await start(), [
      "deno",
      "run",
      "--quiet",
      "--config",
      config,
      "--allow-net",
      source,
      "a",
    ]);
    // Loading nothing of a config, the entry fails to start instead of loading as a member.
    await Deno.writeTextFile(`${above}/deno.json`, '{ "workspace": ["./tern"] }\n');
    deepEqual(await start(), [
      "deno",
      "run",
      "--quiet",
      "--no-config",
      "--no-lock",
      "--allow-net",
      source,
      "a",
    ]);
  } finally {
    await Deno.remove(above, { recursive: true });
  }
});
