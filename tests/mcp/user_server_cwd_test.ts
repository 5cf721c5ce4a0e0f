/**
 * The person's own MCP server outside bubblewrap never starts in a folder the repository
 * controls unless the person names it: launchers load code from where they start (`python -m`
 * from that folder, `node`'s `require` and `npx` from it and the folders above), so a cloned
 * repository shipping a module of the same name would run on the host with no trust decision.
 * Real `tern mcp list`, real python3 and node processes, a repository with hostile modules.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTern } from "../support/tern_process.ts";

const PYTHON = "/usr/bin/python3";
const NODE = "/usr/bin/node";

/** The person's server: a minimal MCP server over stdio that first records where it runs. */
const PERSON_SERVER = `
import json, os, sys
with open(os.environ["PROBE_MARK"], "w") as mark:
    json.dump({"cwd": os.getcwd(), "env": dict(os.environ)}, mark)
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "probe", "version": "1"}}
    else:
        result = {"tools": []}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
`;

/** The person's node module: records where it runs, then exits. */
const PERSON_MODULE = `require("fs").writeFileSync(process.env.PROBE_MARK, ` +
  `JSON.stringify({ cwd: process.cwd() }));\n`;

interface Scene {
  root: string;
  /** The person's own modules (on PYTHONPATH and NODE_PATH). */
  person: string;
  /** Written only by a module of the repository. */
  hostileMark: string;
  mark(name: string): string;
}

async function withScene(fn: (scene: Scene) => Promise<void>): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern_mcp_cwd_" }));
  const person = join(root, "person");
  Deno.mkdirSync(join(person, "tern_probe_mod"), { recursive: true });
  Deno.writeTextFileSync(join(person, "tern_probe_srv.py"), PERSON_SERVER);
  Deno.writeTextFileSync(join(person, "tern_probe_mod", "index.js"), PERSON_MODULE);
  try {
    await fn({
      root,
      person,
      hostileMark: join(root, "hostile-ran"),
      mark: (name) => join(root, `${name}.json`),
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** Modules a repository ships under the names the person's servers load. */
function plantHostile(folder: string, scene: Scene): void {
  const write = `open(${JSON.stringify(scene.hostileMark)}, "a").write("python\\n")\n`;
  Deno.writeTextFileSync(join(folder, "tern_probe_srv.py"), write);
  Deno.mkdirSync(join(folder, "node_modules", "tern_probe_mod"), { recursive: true });
  Deno.writeTextFileSync(
    join(folder, "node_modules", "tern_probe_mod", "index.js"),
    `require("fs").appendFileSync(${JSON.stringify(scene.hostileMark)}, "node\\n");\n`,
  );
}

function pythonServer(scene: Scene, name: string, extra: Record<string, unknown> = {}) {
  return {
    command: PYTHON,
    args: ["-m", "tern_probe_srv"],
    env: { PYTHONPATH: scene.person, PROBE_MARK: scene.mark(name) },
    ...extra,
  };
}

function nodeServer(scene: Scene, name: string) {
  return {
    command: NODE,
    args: ["-e", `require("tern_probe_mod")`],
    env: { NODE_PATH: scene.person, PROBE_MARK: scene.mark(name) },
  };
}

async function listJson(workspace: string, ternHome: string) {
  // PWD as a shell sets it: it must not reach a server.
  const env = { HOME: ternHome, TERN_HOME: ternHome, PWD: workspace };
  const run = await runTern(["mcp", "list", "--json"], { cwd: workspace, env });
  assert.equal(run.code, 0, run.stderr);
  return new Map(
    (JSON.parse(run.stdout) as { name: string; state: string }[]).map((s) => [s.name, s.state]),
  );
}

function readMark(scene: Scene, name: string): { cwd: string; env?: Record<string, string> } {
  return JSON.parse(Deno.readTextFileSync(scene.mark(name)));
}

function hostileRan(scene: Scene): string {
  try {
    return Deno.readTextFileSync(scene.hostileMark);
  } catch {
    return "";
  }
}

Deno.test("tern mcp list: the person's unsandboxed server starts in their tern home, so a repository's module of the same name never runs", async () => {
  await withScene(async (scene) => {
    const { root } = scene;
    const ternHome = join(root, "home", ".tern");
    const ws = join(root, "ws");
    Deno.mkdirSync(ternHome, { recursive: true });
    Deno.mkdirSync(ws);
    plantHostile(ws, scene);
    Deno.writeTextFileSync(
      join(ternHome, "mcp.json"),
      JSON.stringify({
        servers: { py: pythonServer(scene, "py"), js: nodeServer(scene, "js") },
      }),
    );
    const states = await listJson(ws, ternHome);
    assert.equal(hostileRan(scene), "");
    assert.equal(states.get("py"), "READY");
    const py = readMark(scene, "py");
    assert.equal(py.cwd, ternHome);
    assert.equal(readMark(scene, "js").cwd, ternHome);
    // Nothing in its environment leads into the workspace either.
    const intoWorkspace = Object.entries(py.env!).filter(([, value]) => value.includes(ws));
    assert.deepEqual(intoWorkspace, []);
  });
});

Deno.test("tern mcp list: run in the home folder, the person's unsandboxed server starts at /, above no folder of the workspace", async () => {
  await withScene(async (scene) => {
    // The workspace is the home folder, and tern's home lies inside it: node looks for a
    // module in the folders above where it starts, up to the workspace's node_modules.
    const ws = join(scene.root, "home");
    const ternHome = join(ws, ".tern");
    Deno.mkdirSync(ternHome, { recursive: true });
    plantHostile(ws, scene);
    Deno.writeTextFileSync(
      join(ternHome, "mcp.json"),
      JSON.stringify({ servers: { js: nodeServer(scene, "js") } }),
    );
    await listJson(ws, ternHome);
    assert.equal(hostileRan(scene), "");
    assert.equal(readMark(scene, "js").cwd, "/");
  });
});

Deno.test("tern mcp list: the person's server with a cwd of their own starts there, in the workspace too", async () => {
  await withScene(async (scene) => {
    const { root } = scene;
    const ternHome = join(root, "home", ".tern");
    const ws = join(root, "ws");
    Deno.mkdirSync(join(ternHome, "tools"), { recursive: true });
    Deno.mkdirSync(join(ws, "sub"), { recursive: true });
    Deno.writeTextFileSync(
      join(ternHome, "mcp.json"),
      JSON.stringify({
        servers: {
          there: pythonServer(scene, "there", { cwd: join(ws, "sub") }),
          relative: pythonServer(scene, "relative", { cwd: "tools" }),
        },
      }),
    );
    const states = await listJson(ws, ternHome);
    assert.equal(states.get("there"), "READY");
    assert.equal(states.get("relative"), "READY");
    assert.equal(readMark(scene, "there").cwd, join(ws, "sub"));
    assert.equal(readMark(scene, "relative").cwd, join(ternHome, "tools"));
  });
});
