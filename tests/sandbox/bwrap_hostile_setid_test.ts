/**
 * Adversarial: set-ID programs left in the workspace. Commands run as the person's user, often
 * root; the workspace is a real folder of the host, so a set-user-ID copy of a shell made there
 * would run as that user for anyone who starts it on the host, long after tern. No way of
 * setting the bits may work: chmod, install, a create with the bits in its mode, mknod.
 */
import { deepEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { bwrapTest } from "./_bwrap_helpers.ts";
import { withViewBox } from "./_view_box.ts";

const hasPython = await new Deno.Command("python3", { args: ["-c", ""] }).output()
  .then((out) => out.success, () => false);
if (!hasPython) console.warn("\n!!!!! SKIPPING the python set-ID cases: no python3 !!!!!\n");

/** Files of `dir` (not below) whose mode has a set-ID bit, as `name mode`. */
async function setIdFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const info = await Deno.lstat(join(dir, entry.name));
    if ((info.mode ?? 0) & 0o6000) found.push(`${entry.name} ${(info.mode ?? 0).toString(8)}`);
  }
  return found.sort();
}

const PY = [
  "import os, stat",
  "for name, how in [('py-open', lambda: os.close(os.open('py-open', os.O_CREAT | os.O_WRONLY, 0o4755))),",
  "  ('py-mknod', lambda: os.mknod('py-mknod', stat.S_IFREG | 0o2755)),",
  "  ('py-fchmod', lambda: (open('py-fchmod', 'w').close(), os.chmod(os.open('py-fchmod', os.O_RDONLY), 0o4755)))]:",
  "  try: how()",
  "  except OSError as e: print(name, e.errno)",
].join("\n");

for (const profile of [":workspace", ":external"]) {
  bwrapTest(
    `createSandbox() shell (${profile}): no command leaves a set-user-ID or set-group-ID file in the workspace`,
    async () => {
      await withViewBox(async (box) => {
        const result = await box.run([
          "cp /bin/sh ./suid-sh; chmod u+s ./suid-sh",
          "cp /bin/sh ./sgid-sh; chmod 2755 ./sgid-sh",
          "install -m 4755 /bin/sh ./installed-sh",
          "mkdir shared; chmod g+s shared",
          hasPython ? `python3 -c "${PY}"` : ":",
          "true",
        ].join("; "));
        deepEqual(await setIdFiles(box.ws), [], result.output);
      }, { profile });
    },
  );
}

bwrapTest(
  "createSandbox() shell: ordinary modes still work (chmod +x, creating files)",
  async () => {
    await withViewBox(async (box) => {
      const result = await box.run(
        "printf 'echo ok\\n' > run.sh && chmod 755 run.sh && ./run.sh && cp -p run.sh copy.sh && " +
          "mkdir -m 700 private && install -m 644 run.sh installed && stat -c %a run.sh private installed",
      );
      equal(result.output, "ok\n755\n700\n644\n");
    });
  },
);
