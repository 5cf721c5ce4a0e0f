/**
 * The checkpoint store's git in bubblewrap's view (src/harness/rewind/confined_git.ts): whether
 * git runs in the view is probed only after a run there fails, a failure of git's own stays
 * git's (never run again on the host, where a swapped folder could lead outside), and a git
 * the view cannot run still checkpoints, on the host.
 */
import { deepEqual, equal, match, rejects } from "node:assert/strict";
import { join } from "node:path";
import { runWorkspaceGit } from "../../src/harness/rewind/confined_git.ts";
import { ShadowStore } from "../../src/harness/rewind/shadow_store.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

interface Place {
  root: string;
  ws: string;
  gitDir: string;
  /** A folder holding the git to use, and nothing else. */
  bin: string;
}

async function withPlace(fn: (place: Place) => Promise<void>): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern_confined_git_" }));
  try {
    const place = {
      root,
      ws: join(root, "ws"),
      gitDir: join(root, "store"),
      bin: join(root, "bin"),
    };
    for (const folder of [place.ws, place.bin]) await Deno.mkdir(folder);
    const init = new Deno.Command("/usr/bin/git", { args: ["init", "-q", "--bare", place.gitDir] });
    equal((await init.output()).code, 0);
    // On the host only: the view shows neither it nor anything else of `root` but the mounts.
    await Deno.writeTextFile(join(root, "host-marker"), "");
    await fn(place);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/**
 * A git at `<bin>/git` that logs, in the store, where it runs ("view" or "host") and its last
 * argument, then runs the real git. `interpreter` is the script's `#!` program.
 */
async function loggingGit(place: Place, interpreter = "/bin/sh"): Promise<string> {
  const git = join(place.bin, "git");
  const where = `[ -e ${join(place.root, "host-marker")} ] && echo host || echo view`;
  await Deno.writeTextFile(
    git,
    `#!${interpreter}\n` +
      `for last in "$@"; do :; done\n` +
      `echo "$(${where}) $last" >> "$GIT_DIR/runs.log"\n` +
      `exec /usr/bin/git "$@"\n`,
  );
  await Deno.chmod(git, 0o755);
  return git;
}

async function runs(place: Place): Promise<string[]> {
  const text = await Deno.readTextFile(join(place.gitDir, "runs.log")).catch(() => "");
  return text.split("\n").filter((line) => line !== "");
}

function options(place: Place) {
  return {
    cwd: place.ws,
    env: { PATH: `${place.bin}:/usr/bin:/bin` },
    isolated: { gitDir: place.gitDir, workTree: place.ws },
    workspace: place.ws,
    indexFile: join(place.gitDir, "index-test"),
  };
}

testWith(
  [bwrapNeed],
  "runWorkspaceGit() runs in the view with no probe first, and keeps git's own failure there",
  async () => {
    await withPlace(async (place) => {
      await loggingGit(place);
      await Deno.writeTextFile(join(place.ws, "a.txt"), "a\n");
      const listed = await runWorkspaceGit(
        ["ls-files", "-z", "--others", "--", "."],
        options(place),
      );
      equal(listed?.code, 0, listed?.stderr);
      equal(new TextDecoder().decode(listed!.stdout), "a.txt\0");
      deepEqual(await runs(place), ["view ."]);

      // git's own failure: told as it is, after one probe of the view, never run on the host.
      const failed = await runWorkspaceGit(
        ["ls-files", "--error-unmatch", "--", "absent.txt"],
        options(place),
      );
      equal(failed?.code, 1);
      match(failed!.stderr, /absent\.txt/);
      deepEqual(await runs(place), ["view .", "view absent.txt", "view --version"]);
    });
  },
);

testWith(
  [bwrapNeed],
  "ShadowStore.snapshot() with a git the view cannot run checkpoints on the host",
  async () => {
    await withPlace(async (place) => {
      // Its interpreter is a link in a folder the view does not show: it starts only on the host.
      await Deno.symlink("/bin/sh", join(place.bin, "sh"));
      await loggingGit(place, join(place.bin, "sh"));
      await Deno.writeTextFile(join(place.ws, "a.txt"), "kept\n");
      const store = await ShadowStore.open(place.gitDir, place.ws, {
        indexName: "s1",
        maxFileBytes: 1024 * 1024,
        path: `${place.bin}:/usr/bin:/bin`,
      });
      const { tree } = await store.snapshot();
      const shown = new Deno.Command("/usr/bin/git", {
        args: ["--git-dir", place.gitDir, "show", `${tree}:a.txt`],
        stdout: "piped",
      }).outputSync();
      equal(new TextDecoder().decode(shown.stdout), "kept\n");
      const logged = await runs(place);
      deepEqual(logged.filter((line) => !line.startsWith("host ")), []);
    });
  },
);

testWith(
  [bwrapNeed],
  "runWorkspaceGit() stopped by its signal probes nothing: the next run is in the view still",
  async () => {
    await withPlace(async (place) => {
      await loggingGit(place);
      const stop = new AbortController();
      stop.abort();
      const stopped = await runWorkspaceGit(["ls-files", "-z", "--others", "--", "."], {
        ...options(place),
        signal: stop.signal,
      });
      equal(stopped?.code, 137);
      const listed = await runWorkspaceGit(
        ["ls-files", "-z", "--others", "--", "."],
        options(place),
      );
      equal(listed?.code, 0, listed?.stderr);
      // Killed before it logged anything, then run in the view; never probed, never on the host.
      deepEqual(await runs(place), ["view ."]);
    });
  },
);

testWith(
  [bwrapNeed],
  "ShadowStore.snapshot() where git runs on the host names a FIFO .gitignore instead of waiting on it",
  async () => {
    await withPlace(async (place) => {
      await Deno.symlink("/bin/sh", join(place.bin, "sh"));
      await loggingGit(place, join(place.bin, "sh"));
      await Deno.writeTextFile(join(place.ws, "a.txt"), "kept\n");
      await Deno.mkdir(join(place.ws, "sub"));
      const made = await new Deno.Command("mkfifo", { args: [join(place.ws, "sub", ".gitignore")] })
        .output();
      equal(made.code, 0);
      const store = await ShadowStore.open(place.gitDir, place.ws, {
        indexName: "s1",
        maxFileBytes: 1024 * 1024,
        path: `${place.bin}:/usr/bin:/bin`,
        timeoutMs: 20_000,
      });
      await rejects(store.snapshot(), /"sub\/\.gitignore" is a FIFO, which git would wait on/);
    });
  },
);
