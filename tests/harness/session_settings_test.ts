/**
 * A session's recorded review mode and profile against the run that continues it: opening,
 * switching and forking weigh them the same way, never widen what tern may do, and say what
 * they restored or kept. A session of another directory is never continued.
 */
import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { type AgentSession, openAgentSession } from "../../src/harness/agent_session.ts";
import { SessionChoiceError } from "../../src/harness/errors.ts";
import { allowsNoMore, restoreSessionSettings } from "../../src/harness/run_session.ts";
import type { ConfigFlags, ConfigSource } from "../../src/config/mod.ts";
import { Session } from "../../src/session/session.ts";
import type { ReplayState } from "../../src/session/replay.ts";
import { withScriptedServer } from "../support/scripted_server.ts";

const FLAG: ConfigSource = { layer: "flag", flag: "--mode" };
const ENV: ConfigSource = { layer: "env", variable: "TERN_MODE" };
const DEFAULT: ConfigSource = { layer: "default" };

/** A replayed state that recorded only `mode` and `profile`. */
function recorded(mode: string, profile: string): ReplayState {
  return { mode, profile } as ReplayState;
}

const run = { model: "m", thinking: "medium" as const, provider: undefined };

Deno.test("allowsNoMore() orders modes and built-in profiles and compares no two custom ones", () => {
  ok(allowsNoMore("mode", "ask", "bypass"));
  ok(allowsNoMore("mode", "auto", "auto"));
  ok(!allowsNoMore("mode", "bypass", "auto"));
  ok(!allowsNoMore("mode", "auto", "ask"));
  ok(allowsNoMore("profile", ":read-only", ":workspace"));
  ok(!allowsNoMore("profile", ":danger-full-access", ":external"));
  ok(!allowsNoMore("profile", ":external", ":workspace"));
  ok(allowsNoMore("profile", "mine", ":danger-full-access"));
  ok(allowsNoMore("profile", "mine", "mine"));
  ok(!allowsNoMore("profile", "mine", ":read-only"));
  ok(!allowsNoMore("profile", ":read-only", "mine"));
  ok(!allowsNoMore("profile", "mine", "theirs"));
  ok(!allowsNoMore("mode", "nonsense", "bypass"));
});

Deno.test("restoreSessionSettings() restores a narrower mode and profile and keeps out a wider one", () => {
  const wide = recorded("bypass", ":danger-full-access");
  // The default run: the session's wider settings are not restored, and the person hears it.
  const defaults = restoreSessionSettings(
    { ...run, mode: "ask", profile: ":workspace" },
    { mode: DEFAULT, profile: DEFAULT },
    wide,
  );
  deepEqual([defaults.config.mode, defaults.config.profile], ["ask", ":workspace"]);
  equal(defaults.notes.length, 2);
  match(defaults.notes[0], /^Kept mode "ask": the session ran with mode "bypass".*--mode bypass/);
  match(defaults.notes[1], /^Kept profile ":workspace".*--profile :danger-full-access/);
  // The environment's narrower choice holds against the session's.
  const fromEnv = restoreSessionSettings(
    { ...run, mode: "ask", profile: ":read-only" },
    { mode: ENV, profile: { layer: "env", variable: "TERN_PROFILE" } },
    wide,
  );
  deepEqual([fromEnv.config.mode, fromEnv.config.profile], ["ask", ":read-only"]);
  // A narrower session is restored over the environment's wider setting, and said so.
  const narrow = restoreSessionSettings(
    { ...run, mode: "bypass", profile: ":workspace" },
    { mode: ENV, profile: DEFAULT },
    recorded("ask", ":read-only"),
  );
  deepEqual([narrow.config.mode, narrow.config.profile], ["ask", ":read-only"]);
  match(narrow.notes.join("\n"), /Restored the session's mode "ask" \(this run's is "bypass"\)/);
  // A flag is the person's choice for this run: it wins either way, without a note.
  const flagged = restoreSessionSettings(
    { ...run, mode: "bypass", profile: ":read-only" },
    { mode: FLAG, profile: { layer: "flag", flag: "--profile" } },
    recorded("ask", ":danger-full-access"),
  );
  deepEqual([flagged.config.mode, flagged.config.profile], ["bypass", ":read-only"]);
  deepEqual(flagged.notes, []);
});

/** Runs `body` in a fresh workspace and tern home, with the process environment pointing there. */
async function withWorkspace(
  body: (ws: { dir: string; other: string; home: string }) => Promise<void>,
  env: Record<string, string> = {},
) {
  const temp = async (prefix: string) => await Deno.realPath(await Deno.makeTempDir({ prefix }));
  const [dir, other, home] = await Promise.all(
    ["tern-settings-ws-", "tern-settings-other-", "tern-settings-home-"].map(temp),
  );
  const all = { TERN_HOME: home, HOME: home, TERN_API_KEY: "sk-test", ...env };
  const names = [...Object.keys(all), "TERN_MODE", "TERN_PROFILE"];
  const saved = names.map((name) => [name, Deno.env.get(name)] as const);
  for (const name of ["TERN_MODE", "TERN_PROFILE"]) Deno.env.delete(name);
  for (const [name, value] of Object.entries(all)) Deno.env.set(name, value);
  try {
    await body({ dir, other, home });
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) Deno.env.delete(name);
      else Deno.env.set(name, value);
    }
    for (const path of [dir, other, home]) await Deno.remove(path, { recursive: true });
  }
}

/** A closed session of `cwd` that ran under `mode` and `profile`; its path. */
function sessionThatRan(home: string, cwd: string, mode: string, profile: string): string {
  const session = Session.create(home, { cwd, ternVersion: "test" });
  session.append({ type: "message", message: { role: "user", content: "earlier" } });
  session.append({ type: "mode", mode });
  session.append({ type: "profile", profile });
  session.close();
  return session.path;
}

async function open(
  dir: string,
  baseUrl: string,
  flags: ConfigFlags,
  resume?: string,
): Promise<{ agent: AgentSession; warnings: string[] }> {
  const warnings: string[] = [];
  const agent = await openAgentSession({
    workspace: dir,
    flags: { baseUrl, noSandbox: true, ...flags },
    ...(resume === undefined ? {} : { session: { resume } }),
    emit: () => {},
    warn: (text) => warnings.push(text),
  });
  return { agent, warnings };
}

Deno.test("openAgentSession() resumes a bypass session under the environment's narrower mode and profile, and says so", async () => {
  await withWorkspace(async ({ dir, home }) => {
    const path = sessionThatRan(home, dir, "bypass", ":danger-full-access");
    await withScriptedServer(() => ({ text: "hi" }), async (server) => {
      const { agent, warnings } = await open(dir, server.baseUrl, {}, path);
      try {
        deepEqual([agent.config.mode, agent.config.profile], ["ask", ":read-only"]);
        match(warnings.join("\n"), /Kept mode "ask": the session ran with mode "bypass"/);
        match(warnings.join("\n"), /Kept profile ":read-only".*":danger-full-access"/);
      } finally {
        await agent.close();
      }
    });
  }, { TERN_MODE: "ask", TERN_PROFILE: ":read-only" });
});

Deno.test("AgentSession.switchSession() and fork() keep this run's narrower mode and profile", async () => {
  await withWorkspace(async ({ dir, home }) => {
    const wide = sessionThatRan(home, dir, "bypass", ":danger-full-access");
    const narrow = sessionThatRan(home, dir, "ask", ":read-only");
    await withScriptedServer(() => ({ text: "hi" }), async (server) => {
      // The command line's choice, over a session that recorded more.
      const { agent } = await open(
        dir,
        server.baseUrl,
        { mode: "ask", profile: ":read-only" },
        wide,
      );
      try {
        deepEqual([agent.config.mode, agent.config.profile], ["ask", ":read-only"]);
        const { note } = await agent.fork();
        deepEqual([agent.config.mode, agent.config.profile], ["ask", ":read-only"]);
        equal(note, undefined, "a flag's choice needs no note");
        await agent.switchSession(await Session.open(wide));
        deepEqual([agent.config.mode, agent.config.profile], ["ask", ":read-only"]);
      } finally {
        await agent.close();
      }
      // No flag: the default run keeps the wider session's settings out and says so; it takes
      // a narrower session's, and a new session is the run's own again.
      const { agent: plain } = await open(dir, server.baseUrl, {});
      try {
        const kept = await plain.switchSession(await Session.open(wide));
        deepEqual([plain.config.mode, plain.config.profile], ["ask", ":workspace"]);
        match(kept.note ?? "", /Kept mode "ask".*\n.*Kept profile ":workspace"/);
        const forked = await plain.fork();
        deepEqual([plain.config.mode, plain.config.profile], ["ask", ":workspace"]);
        match(forked.note ?? "", /Kept mode "ask"/);
        const restored = await plain.switchSession(await Session.open(narrow));
        deepEqual([plain.config.mode, plain.config.profile], ["ask", ":read-only"]);
        match(restored.note ?? "", /Restored the session's profile ":read-only"/);
        await plain.switchSession(Session.create(home, { cwd: dir, ternVersion: "test" }));
        deepEqual([plain.config.mode, plain.config.profile], ["ask", ":workspace"]);
        // The person's own /mode and /profile in this run are a flag's equal.
        await plain.configure({ mode: "bypass", profile: ":external" });
        await plain.switchSession(await Session.open(narrow));
        deepEqual([plain.config.mode, plain.config.profile], ["bypass", ":external"]);
      } finally {
        await plain.close();
      }
    });
  });
});

Deno.test("AgentSession.switchSession() refuses another directory's session and keeps the current one", async () => {
  await withWorkspace(async ({ dir, other, home }) => {
    const foreign = sessionThatRan(home, other, "ask", ":workspace");
    const before = await Deno.readTextFile(foreign);
    await withScriptedServer(() => ({ text: "hi" }), async (server) => {
      const { agent } = await open(dir, server.baseUrl, {});
      try {
        equal((await agent.conversation.turn("hello")).exitReason, "COMPLETED");
        const current = agent.session;
        await rejects(
          agent.switchSession(await Session.open(foreign)),
          (error) =>
            error instanceof SessionChoiceError &&
            error.message.includes(`belongs to "${other}", not "${dir}"`),
        );
        equal(agent.session, current);
        equal((await agent.conversation.turn("again")).exitReason, "COMPLETED");
        ok(current.entries.some((entry) => JSON.stringify(entry).includes("again")));
        equal(await Deno.readTextFile(foreign), before, "nothing went into the other session");
        // Refused and closed: its lock is free.
        (await Session.open(foreign)).close();
      } finally {
        await agent.close();
      }
    });
  });
});
