/**
 * Adversarial: tern run in the home folder (the workspace is `~`, or a folder above it). The
 * home's start-up and configuration files run code on the host later: a shell's `.bashrc`, git's
 * `.gitconfig` (`core.fsmonitor` runs at the next `git status` anywhere), programs in
 * `.local/bin` or `~/bin` found before the system's. Commands must not write, replace or create
 * them, while the rest of the workspace stays writable.
 */
import { equal } from "node:assert/strict";
import { join } from "node:path";
import { createSandbox } from "../../src/sandbox/runtime.ts";
import { bwrapTest } from "./_bwrap_helpers.ts";

/** Each attack, and the files it must leave as they were. */
const ATTACKS: Record<string, string> = {
  "append to .bashrc": "echo 'touch PWNED' >> ~/.bashrc",
  "set git's fsmonitor": "printf '[core]\\n\\tfsmonitor = touch PWNED\\n' >> ~/.gitconfig",
  "replace .bashrc by a new file": "rm -f ~/.bashrc && echo 'touch PWNED' > ~/.bashrc",
  "replace a linked .profile": "rm -f ~/.profile && echo 'touch PWNED' > ~/.profile",
  "create a missing .bash_login": "echo 'touch PWNED' > ~/.bash_login",
  "rename .config away and make a new one":
    "mv ~/.config ~/old && mkdir -p ~/.config/autostart && echo PWNED > ~/.config/autostart/x.desktop",
  "put a git in ~/.local/bin": "echo 'touch PWNED' > ~/.local/bin/git && chmod +x ~/.local/bin/git",
  // A linked guard in a read-only home needs no refusal: commands run, the link stays.
  "replace a linked .tern": "rm -f ~/.tern && mkdir ~/.tern",
  "put a git in ~/bin": "echo 'touch PWNED' > ~/bin/git && chmod +x ~/bin/git",
  "put a git in ~/go/bin": "echo 'touch PWNED' > ~/go/bin/git && chmod +x ~/go/bin/git",
};

/** The home's files before the attacks: path relative to the home, and content or link. */
async function snapshot(home: string): Promise<string> {
  const lines: string[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      const relative = path.slice(home.length + 1);
      if (relative === "projects") continue;
      if (entry.isSymlink) lines.push(`${relative} -> ${await Deno.readLink(path)}`);
      else if (entry.isDirectory) await walk(path);
      else lines.push(`${relative}: ${await Deno.readTextFile(path)}`);
    }
  };
  await walk(home);
  return lines.sort().join("\n");
}

bwrapTest(
  "createSandbox() shell: with the home as workspace, commands cannot change the home's start-up files",
  async (t) => {
    const root = await Deno.realPath(
      await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_home_ws_" }),
    );
    const home = join(root, "home");
    const files: Record<string, string> = {
      ".bashrc": "# rc\n",
      ".gitconfig": "[user]\n\tname = Test\n",
      "dotfiles/profile": "# profile\n",
      ".config/git/ignore": "*.swp\n",
      ".local/bin/tool": "#!/bin/sh\n",
      "bin/mine": "#!/bin/sh\n",
      "go/bin/gopls": "#!/bin/sh\n",
      "projects/app/README.md": "app\n",
    };
    for (const [path, text] of Object.entries(files)) {
      await Deno.mkdir(join(home, path, ".."), { recursive: true });
      await Deno.writeTextFile(join(home, path), text);
    }
    await Deno.symlink("dotfiles/profile", join(home, ".profile"));
    await Deno.mkdir(join(home, "dotfiles", "tern"));
    await Deno.symlink("dotfiles/tern", join(home, ".tern"));
    await Deno.mkdir(join(root, "tern-home"));
    const runtime = await createSandbox({
      workspace: home,
      profile: ":workspace",
      noSandbox: false,
      home,
      ternHome: join(root, "tern-home"),
      env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: home },
      handlerUrl: new URL("../../src/tools/worker_handler.ts", import.meta.url),
      runId: "home-ws",
    });
    try {
      const before = await snapshot(home);
      for (const [what, command] of Object.entries(ATTACKS)) {
        await t.step(what, async () => {
          const result = await runtime.shell(
            `if { ${command}; } 2>/dev/null; then echo GOT-THROUGH; fi`,
            {
              cwd: home,
              timeoutMs: 30_000,
            },
          );
          equal(result.output, "", `${what}: ${result.output}`);
        });
      }
      equal(await snapshot(home), before);
      // The rest of the workspace is the workspace: writable.
      const result = await runtime.shell(
        "echo changed > projects/app/README.md && mkdir projects/new && cat projects/app/README.md",
        { cwd: home },
      );
      equal(result.output, "changed\n");
    } finally {
      await runtime.close();
      await Deno.remove(root, { recursive: true });
    }
  },
);
