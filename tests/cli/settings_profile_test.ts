/** `/profile`: an unknown name is refused before it reaches the session's settings. */
import { deepEqual, rejects } from "node:assert/strict";
import { settingsCommands } from "../../src/cli/interactive/settings_commands.ts";

Deno.test("/profile refuses a name that is no profile, and takes a custom one", async () => {
  const profile = settingsCommands({
    models: () => Promise.resolve([]),
    memory: () => Promise.reject(new Error("unused")),
    diff: () => Promise.resolve(undefined),
  }).find((command) => command.name === "profile")!;
  const signal = new AbortController().signal;
  const configured: unknown[] = [];
  const notices: string[] = [];
  const context = {
    config: { profile: ":workspace", profiles: { mine: { extends: ":workspace" } } },
    configure: (change: unknown) => {
      configured.push(change);
      return Promise.resolve();
    },
    notice: (text: string) => notices.push(text),
  } as never;
  await rejects(
    Promise.resolve(profile.run(context, ":nope", signal)),
    /Unknown sandbox profile ":nope": choose one of :read-only, :workspace, .*mine/,
  );
  deepEqual(configured, []);
  await profile.run(context, "mine", signal);
  await profile.run(context, ":read-only", signal);
  deepEqual(configured, [{ profile: "mine" }, { profile: ":read-only" }]);
});
