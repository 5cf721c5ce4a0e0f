/**
 * `tern config` is the table a person pastes into a bug report: a key tern holds, written into
 * another setting (a checker's command, a rule's reason), a token of a known format, and a key
 * in the path of a URL setting (`webFetch.reader`) are shown masked.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

/** The person's key: no known format, found because tern holds it. */
const KEY = "Qm7rT2vX9kLp4Wz8";
const GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
const PATH_TOKEN = "Zq8v3Lr5Nw2Kp7Xt9Ym4Hb6Jc1Fd0Gs";
/** Puts the second rule's key at the 150th character of the rules' line (cut at 160). */
const CUT_PAD = 150 -
  JSON.stringify([
    { action: "deny", command: "curl", reason: `never send ${KEY}` },
    { action: "deny", command: "wget", reason: "" },
  ]).indexOf('""}]') - 1;

Deno.test("tern config masks a key tern holds, a known token and a URL's path key in any setting", async () => {
  const ws = await tempWorkspace();
  try {
    await Deno.writeTextFile(
      join(ws.home, "config.jsonc"),
      JSON.stringify({
        diagnostics: {
          checkers: [{
            name: "lint",
            extensions: [".ts"],
            command: `lint --auth ${KEY} --gh ${GITHUB} {file}`,
          }],
        },
        rules: [
          { action: "deny", command: "curl", reason: `never send ${KEY}` },
          // Its key straddles where the long line is cut short: masked before the cut.
          { action: "deny", command: "wget", reason: `${"w".repeat(CUT_PAD)}${KEY}` },
        ],
        webFetch: { reader: `https://reader.test/${PATH_TOKEN}/` },
      }),
    );
    const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: KEY };
    const shown = await runTern(["config"], { cwd: ws.dir, env });
    equal(shown.code, 0, shown.stderr);
    const text = shown.stdout + shown.stderr;
    for (const secret of [KEY.slice(0, 8), GITHUB, PATH_TOKEN]) ok(!text.includes(secret), text);
    match(shown.stdout, /^apiKey +set \(from TERN_API_KEY in the environment\)$/m);
    match(shown.stdout, /^diagnostics +.*lint --auth \[REDACTED\] --gh \[REDACTED:github-token\]/m);
    match(shown.stdout, /^rules +.*never send \[REDACTED\]/m);
    match(shown.stdout, /^webFetch +.*"reader":"https:\/\/reader\.test\/\*\*\*\/"/m);
  } finally {
    await ws.cleanup();
  }
});
