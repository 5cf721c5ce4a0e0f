/**
 * For checkpoint tests: a stand-in writing tool (a "bash" that runs a function on the host), the
 * real TurnCheckpoints of a session that fails the test on any warning, and one checkpointed
 * turn of such a session.
 */
import type { PermissionRule } from "../../src/config/schema.ts";
import { TurnCheckpoints } from "../../src/harness/rewind/turn_checkpoints.ts";
import type { Session } from "../../src/session/session.ts";
import type { Tool } from "../../src/tools/define.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";

/** The folders {@linkcode temp} made, removed when the test process ends. */
const made: string[] = [];
globalThis.addEventListener("unload", () => {
  for (const dir of made) {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // Gone already, or a test left it unremovable: nothing more to do at exit.
    }
  }
});

/**
 * A fresh temporary folder, its path with links resolved (as tern's own paths are); removed
 * when the test process ends.
 */
export async function temp(prefix: string): Promise<string> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix }));
  made.push(dir);
  return dir;
}

/** A "bash" tool (not read-only, run on the host) whose every call runs `body`. */
export function hostTool(body: () => void): Tool {
  return {
    name: "bash",
    description: "",
    readOnly: false,
    runsIn: "host",
    parameters: {},
    paths: () => Promise.resolve([]),
    run: () => {
      body();
      return Promise.resolve({ status: "OK", output: "" });
    },
  } as unknown as Tool;
}

/** The checkpoints of `session` over `workspace` under `rules()`; a warning fails the test. */
export function strictCheckpoints(
  session: Session,
  workspace: string,
  rules: () => readonly PermissionRule[] = () => [],
): TurnCheckpoints {
  return new TurnCheckpoints({
    sessionPath: session.path,
    sessionId: session.id,
    workspace,
    warn: (text) => {
      throw new Error(text);
    },
    rules,
  });
}

/**
 * One turn of `session` whose one command runs `body`, checkpointed by `checkpoints`: resolves
 * to the turn's user entry id once its closing snapshot is recorded.
 */
export async function checkpointedTurn(
  session: Session,
  checkpoints: TurnCheckpoints,
  body: () => void,
): Promise<string> {
  const user = session.append({ type: "message", message: { role: "user", content: "go" } });
  const tools = checkpoints.wrap(new ToolRegistry([hostTool(body)]), user.id);
  await tools.get("bash")!.run({}, {} as never);
  await checkpoints.endTurn();
  return user.id;
}
