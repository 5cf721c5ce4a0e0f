/**
 * The files tern keeps in its sessions folder (session files, checkpoint logs, saved tool
 * results, images) are opened only as regular files: never through a link, never a FIFO that
 * would make the read wait forever. Real files, links and FIFOs in a temporary TERN_HOME.
 */
import { equal, match, ok, rejects, throws } from "node:assert/strict";
import { join } from "node:path";
import { applyToolResultBudget, toolResultsDir } from "../../src/agent/tool_result_budget.ts";
import { appendRecord, readRecords, recordsPath } from "../../src/harness/rewind/records.ts";
import { SessionFileError } from "../../src/session/errors.ts";
import { storeImages } from "../../src/session/images.ts";
import { loadSession } from "../../src/session/load.ts";
import { findSession, sessionFolder } from "../../src/session/paths.ts";
import { Session } from "../../src/session/session.ts";
import { tempHome } from "./_helpers.ts";

/** `fn` with a TERN_HOME holding one closed session, and a folder outside it. */
async function withSession(
  fn: (where: { home: string; path: string; outside: string }) => Promise<void>,
): Promise<void> {
  const { home, cleanup } = await tempHome();
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-outside-" }));
  try {
    const session = Session.create(home, { cwd: "/w", ternVersion: "t" });
    session.append({ type: "message", message: { role: "user", content: "hi" } });
    session.close();
    await fn({ home, path: session.path, outside });
  } finally {
    await cleanup();
    await Deno.remove(outside, { recursive: true });
  }
}

async function mkfifo(path: string): Promise<void> {
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  equal(made.code, 0, new TextDecoder().decode(made.stderr));
}

/**
 * `pending` settled within 5 s, or a failure. A read that waits on the FIFO `fifo` is let go
 * (its write end opened and closed) so the test ends either way.
 */
async function settlesSoon<T>(pending: Promise<T>, fifo: string): Promise<PromiseSettledResult<T>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => timer = setTimeout(() => resolve("late"), 5_000));
  const settled = pending.then(
    (value): PromiseSettledResult<T> => ({ status: "fulfilled", value }),
    (reason): PromiseSettledResult<T> => ({ status: "rejected", reason }),
  );
  const first = await Promise.race([settled, late]);
  clearTimeout(timer);
  if (first === "late") {
    Deno.openSync(fifo, { write: true }).close();
    await settled;
    throw new Error(`The read waited on the FIFO "${fifo}"`);
  }
  return first;
}

Deno.test("Session.open() refuses a session file that is a link, and writes nothing through it", async () => {
  await withSession(async ({ path, outside }) => {
    const victim = join(outside, "victim.jsonl");
    await Deno.rename(path, victim);
    await Deno.symlink(victim, path);
    const before = await Deno.readTextFile(victim);
    await rejects(Session.open(path), (error: Error) => {
      ok(error instanceof SessionFileError, String(error));
      match(
        error.message,
        /^Cannot open session ".*\.jsonl": it is a symbolic link, not a regular file/,
      );
      return true;
    });
    equal(await Deno.readTextFile(victim), before);
  });
});

Deno.test("findSession() and loadSession() refuse a FIFO instead of waiting on it", async () => {
  await withSession(async ({ home, path }) => {
    await Deno.remove(path);
    await mkfifo(path);
    await rejects(findSession(home, path), /it is a FIFO, not a regular file/);
    const loaded = await settlesSoon(loadSession(path), path);
    equal(loaded.status, "rejected");
    match(String((loaded as PromiseRejectedResult).reason), /it is a FIFO, not a regular file/);
  });
});

Deno.test("Session.create() refuses a workspace folder that is a link out of TERN_HOME", async () => {
  await withSession(async ({ home, outside }) => {
    await Deno.symlink(outside, sessionFolder(home, "/elsewhere"));
    throws(
      () => Session.create(home, { cwd: "/elsewhere", ternVersion: "t" }),
      /^SessionFileError: Cannot use the session folder ".*": it is a symbolic link, not a folder/,
    );
    equal([...Deno.readDirSync(outside)].length, 0, "nothing written outside");
  });
});

Deno.test("appendRecord() never writes through a link; readRecords() refuses a FIFO", async () => {
  await withSession(async ({ path, outside }) => {
    const record = { kind: "rewind" as const, entryId: "e1", time: "t", kept: [] };
    const victim = join(outside, "victim.txt");
    await Deno.writeTextFile(victim, "mine\n");
    await Deno.symlink(victim, recordsPath(path));
    throws(() => appendRecord(path, record), /checkpoint log ".*\.rewind": it is a symbolic link/);
    equal(await Deno.readTextFile(victim), "mine\n");
    // A dangling link is no way around it: the log is created only where nothing is.
    await Deno.remove(victim);
    throws(() => appendRecord(path, record), /it is a symbolic link/);
    equal(await Deno.lstat(victim).catch(() => undefined), undefined, "nothing created outside");

    await Deno.remove(recordsPath(path));
    appendRecord(path, record);
    equal((await readRecords(path)).length, 1, "a plain log is written and read as before");
    equal((await Deno.stat(recordsPath(path))).mode! & 0o777, 0o600);
    await Deno.remove(recordsPath(path));
    await mkfifo(recordsPath(path));
    const read = await settlesSoon(readRecords(path), recordsPath(path));
    equal(read.status, "rejected");
    match(String((read as PromiseRejectedResult).reason), /it is a FIFO, not a regular file/);
  });
});

Deno.test("a long tool result is not saved through a link in the session's folder", async () => {
  await withSession(async ({ path, outside }) => {
    await Deno.symlink(outside, path.replace(/\.jsonl$/, ""));
    const output = "x".repeat(5_000);
    const shown = await applyToolResultBudget({ status: "SUCCEEDED", output }, "c1", {
      limit: 1_000,
      dir: toolResultsDir(path),
    });
    ok(shown.status === "SUCCEEDED" && !shown.output.includes("saved in"), String(shown));
    equal([...Deno.readDirSync(outside)].length, 0, "nothing written outside");
  });
});

Deno.test("storeImages() refuses an image folder that is a link out of TERN_HOME", async () => {
  await withSession(async ({ path, outside }) => {
    const folder = join(path, "..", "images");
    await Deno.symlink(outside, folder);
    const message = {
      role: "user" as const,
      content: "look",
      images: [{ mediaType: "image/png" as const, data: btoa("png"), sha256: "a".repeat(64) }],
    };
    throws(() => storeImages(message, folder), /image folder ".*images": it is a symbolic link/);
    equal([...Deno.readDirSync(outside)].length, 0, "nothing written outside");
  });
});
