/**
 * A rewind after a turn that changed `.gitignore`: the person's ignored files, which the
 * checkpoint never held, are left alone. Real files, real git, the real checkpoint store.
 */
import { deepEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { applyRewind, planRewind } from "../../src/harness/rewind/rewind.ts";
import { describePlan } from "../../src/cli/sessions_rewind.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { hostTool, strictCheckpoints, temp } from "../support/host_tool.ts";
import { Session } from "../../src/session/session.ts";

Deno.test("applyRewind() keeps the person's ignored files when the turn rewrote .gitignore", async () => {
  const home = await temp("tern-home-");
  const ws = await temp("tern-ws-");
  try {
    Deno.writeTextFileSync(join(ws, ".gitignore"), "secret.env\ndata/\n");
    Deno.writeTextFileSync(join(ws, "secret.env"), "API_TOKEN=person-owned\n");
    Deno.mkdirSync(join(ws, "data"));
    Deno.writeTextFileSync(join(ws, "data", "big.csv"), "precious\n");
    Deno.writeTextFileSync(join(ws, "main.py"), "code\n");
    const session = Session.create(home, { cwd: ws, ternVersion: "test" });
    const user = session.append({ type: "message", message: { role: "user", content: "go" } });
    const checkpoints = strictCheckpoints(session, ws);
    const turn = hostTool(() => {
      Deno.writeTextFileSync(join(ws, ".gitignore"), "build/\n");
      Deno.writeTextFileSync(join(ws, "main.py"), "edited\n", { append: true });
      Deno.writeTextFileSync(join(ws, "new.txt"), "made by the turn\n");
      // Made behind the turn's own rule: shown, as a conflict (no checkpoint saw it come).
      Deno.mkdirSync(join(ws, "build"));
      Deno.writeTextFileSync(join(ws, "build", "out.js"), "built\n");
    });
    const tools = checkpoints.wrap(new ToolRegistry([turn]), user.id);
    await tools.get("bash")!.run({}, {} as never);
    await checkpoints.endTurn();

    const options = { workspace: ws, scope: "files" as const, rules: [] };
    const plan = await planRewind(session, user.id, options);
    deepEqual(plan.ignored, ["data/big.csv", "secret.env"]);
    deepEqual(plan.changes.map((c) => `${c.path} ${c.status}`), [
      ".gitignore modified",
      "build/out.js deleted",
      "main.py modified",
      "new.txt deleted",
    ]);
    deepEqual(plan.conflicts, ["build/out.js"]);
    equal(plan.patch.includes("person-owned"), false, plan.patch);
    // The person is told before anything moves.
    const text = describePlan(plan);
    equal(
      text.includes(`kept: "secret.env" is ignored by the checkpoint's .gitignore`),
      true,
      text,
    );
    const result = await applyRewind(session, plan, options);
    deepEqual(result.deleted, ["new.txt"]);
    deepEqual(result.kept, ["data/big.csv", "secret.env", "build/out.js"]);
    equal(Deno.readTextFileSync(join(ws, "secret.env")), "API_TOKEN=person-owned\n");
    equal(Deno.readTextFileSync(join(ws, "data", "big.csv")), "precious\n");
    equal(Deno.readTextFileSync(join(ws, ".gitignore")), "secret.env\ndata/\n");
    equal(Deno.readTextFileSync(join(ws, "main.py")), "code\n");
    equal(Deno.readTextFileSync(join(ws, "build", "out.js")), "built\n");
    session.close();
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(ws, { recursive: true });
  }
});
