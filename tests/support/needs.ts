/**
 * What some tests need from the machine (bubblewrap, tmux, the MCP reference servers in Deno's
 * cache), probed once per test process. A test that needs something absent is ignored, and the
 * test run prints one line per missing thing naming what is not tested and how to get it
 * (`./run.sh test` runs bin/setup, which brings them where it can). Never a failure for an
 * environmental reason, never a silent pass.
 */
import { probeBwrap } from "../../src/sandbox/bwrap.ts";
import servers from "../fixtures/mcp/reference_servers.json" with { type: "json" };

/** One requirement: whether it is met, and the line printed when it is not. */
export interface Need {
  ok: boolean;
  /** Why it is missing and how to get it. */
  missing: string;
}

/**
 * Prints `need.missing` once per test run when the need is not met; returns `need`. Each test
 * file has its own module instances, but they share the process's environment, which remembers
 * what was said.
 */
function announce(name: string, need: Need, skipped: string): Need {
  const said = `TERN_TEST_SKIPPED_${name.toUpperCase()}`;
  if (!need.ok && Deno.env.get(said) === undefined) {
    Deno.env.set(said, "1");
    console.warn(`\n!!!!! SKIPPED: ${skipped}: ${need.missing} !!!!!\n`);
  }
  return need;
}

const bwrapProbe = await probeBwrap();

/** Bubblewrap can start a sandbox here. */
export const bwrapNeed: Need = announce("bwrap", {
  ok: bwrapProbe.ok,
  missing: bwrapProbe.ok ? "" : `${bwrapProbe.reason} (./run.sh test installs it as root)`,
}, "the tests of commands in bubblewrap");

/** tmux runs here (the terminal end-to-end tests drive tern through it). */
export const tmuxNeed: Need = announce(
  "tmux",
  await commandNeed("tmux", ["-V"], "tmux is not installed (apt-get install tmux)"),
  "the terminal end-to-end tests",
);

/** The MCP reference servers' npm specifiers, pinned (tests/fixtures/mcp/reference_servers.json). */
export const REFERENCE_SERVERS: { everything: string; filesystem: string } = servers;

/** The reference servers are in Deno's cache (tests run them with --cached-only). */
export const referenceServersNeed: Need = announce(
  "mcp",
  await cachedNpmNeed(Object.values(REFERENCE_SERVERS)),
  "the tests against the MCP reference servers",
);

/** Whether each `npm:name@version` is in Deno's npm cache (where `deno info` says it is). */
async function cachedNpmNeed(specifiers: readonly string[]): Promise<Need> {
  const missing = "the MCP reference servers are not in Deno's cache (bin/setup fetches them)";
  try {
    const info = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json"],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    const { npmCache } = JSON.parse(new TextDecoder().decode(info.stdout));
    for (const specifier of specifiers) {
      const [, name, version] = /^npm:(@?[^@]+)@(.+)$/.exec(specifier)!;
      await Deno.stat(`${npmCache}/registry.npmjs.org/${name}/${version}/package.json`);
    }
    return { ok: true, missing };
  } catch {
    return { ok: false, missing };
  }
}

async function commandNeed(command: string, args: string[], missing: string): Promise<Need> {
  try {
    const { code } = await new Deno.Command(command, {
      args,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    return { ok: code === 0, missing };
  } catch {
    return { ok: false, missing };
  }
}

/** `Deno.test` that is ignored unless every one of `needs` is met. */
export function testWith(needs: readonly Need[], name: string, fn: () => Promise<void>): void {
  Deno.test({ name, ignore: needs.some((need) => !need.ok), fn });
}
