/**
 * Adversarial: `~/.cache` holds more than build caches. A command run for a hostile model must
 * not read a shell history kept there (XDG setups), nor a browser's or mail client's cache of
 * what the person looked at, while the toolchain caches builds read stay visible.
 */
import { deepEqual, equal } from "node:assert/strict";
import { dirname, join } from "node:path";
import { bwrapTest } from "./_bwrap_helpers.ts";
import { withViewBox } from "./_view_box.ts";

const PRIVATE_CACHES: readonly string[] = [
  ".cache/zsh/history",
  ".cache/bash/history",
  ".cache/mozilla/firefox/abc.default/cache2/entries/0A1B2C",
  ".cache/google-chrome/Default/Cache/Cache_Data/f_000001",
  ".cache/chromium/Default/Cache/Cache_Data/f_000001",
  ".cache/evolution/mail/imap/INBOX/cur/1",
  ".cache/thunderbird/abc.default/cache2/entries/3D4E",
  ".cache/JetBrains/IntelliJIdea/log/idea.log",
  ".cache/unknown-tool/session.json",
];

const BUILD_CACHES: readonly string[] = [
  ".cache/pip/http/y",
  ".cache/go-build/00/a-d",
  ".cache/deno/npm/registry.npmjs.org/x.json",
  ".cache/huggingface/hub/models--x/config.json",
];

bwrapTest("createSandbox() shell: only the build caches of ~/.cache are visible", async () => {
  await withViewBox(async (box) => {
    for (const path of [...PRIVATE_CACHES, ...BUILD_CACHES]) {
      await Deno.mkdir(dirname(join(box.home, path)), { recursive: true });
      await Deno.writeTextFile(join(box.home, path), `MARK:${path}\n`);
    }
    const result = await box.run(
      'grep -ra MARK: "$HOME/.cache" 2>/dev/null | sort; ' +
        'ls -A "$HOME/.cache" | grep -v -x -e pip -e go-build -e deno -e huggingface',
    );
    deepEqual(
      result.output.split("\n").filter((line) => line !== "").sort(),
      BUILD_CACHES.map((path) => `${join(box.home, path)}:MARK:${path}`).sort(),
      result.output,
    );
    // Named one by one, through a link in the workspace too: nothing.
    await Deno.symlink(join(box.home, ".cache"), join(box.ws, "cache"));
    for (const path of PRIVATE_CACHES) {
      const read = await box.run(`cat "$HOME/${path}" cache/${path.slice(7)} 2>/dev/null`);
      equal(read.output, "", path);
    }
  });
});
