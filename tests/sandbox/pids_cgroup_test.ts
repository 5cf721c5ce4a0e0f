/** The runs' pids cgroups: a sweep removes only those of dead runs that share its tmp folder. */
import { deepEqual, equal, match, notEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import {
  makePidsCgroup,
  pidsCgroupPrefix,
  removeStalePidsCgroups,
} from "../../src/sandbox/pids_cgroup.ts";

Deno.test("pidsCgroupPrefix() differs by tmp folder and names only safe characters", () => {
  match(pidsCgroupPrefix("/tmp"), /^tern-[0-9a-f]{8}-$/);
  equal(pidsCgroupPrefix("/tmp"), pidsCgroupPrefix("/tmp"));
  notEqual(pidsCgroupPrefix("/tmp"), pidsCgroupPrefix("/var/tmp/box"));
});

Deno.test("removeStalePidsCgroups() keeps a live run's cgroup whose tmp folder is elsewhere", async () => {
  const mine = await Deno.makeTempDir({ prefix: "tern-cg-a-" });
  const other = await Deno.makeTempDir({ prefix: "tern-cg-b-" });
  const name = `tern-tmp-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.mkdir(join(other, name));
  const live = await makePidsCgroup(pidsCgroupPrefix(other) + name, 64);
  try {
    if (live === null) return; // No pids cgroup can be made here: nothing to sweep either.
    // A run whose tmp folders are in `mine` sweeps: the other run's folder is not there, and
    // its cgroup must stay.
    deepEqual(await removeStalePidsCgroups(pidsCgroupPrefix(mine), mine), []);
    ok(await exists(live.path), "the live run's cgroup is still there");
    // Its own sweep removes it once its tmp folder is gone.
    await Deno.remove(join(other, name));
    deepEqual(await removeStalePidsCgroups(pidsCgroupPrefix(other), other), [live.path]);
  } finally {
    await live?.remove();
    await Deno.remove(mine, { recursive: true });
    await Deno.remove(other, { recursive: true });
  }
});

/** Through `test -d`: Deno reads nothing under /sys without --allow-all. */
async function exists(path: string): Promise<boolean> {
  return (await new Deno.Command("test", { args: ["-d", path] }).output()).success;
}
