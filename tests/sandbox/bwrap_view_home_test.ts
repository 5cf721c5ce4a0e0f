/**
 * Adversarial: a shell command sees the home folder only through its allowlist. Credentials
 * planted in a fake HOME (other agents' auth, cloud and registry keys, shell histories,
 * browser profiles, other projects' .env) must not come out, by name, by archive, encoded, or
 * through a link in the workspace; the toolchain entries builds need stay readable.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { bwrapTest } from "./_bwrap_helpers.ts";
import { leaked, PLANTED, TOOLCHAIN, withViewBox } from "./_view_box.ts";

function fromBase64(text: string): string {
  const clean = text.replace(/[^A-Za-z0-9+/=]/g, "");
  return new TextDecoder().decode(Uint8Array.from(atob(clean), (c) => c.charCodeAt(0)));
}

bwrapTest("createSandbox() shell: no planted credential is readable by its path", async (t) => {
  await withViewBox(async (box) => {
    for (const path of PLANTED) {
      await t.step(`~/${path}`, async () => {
        const result = await box.run(`cat "$HOME/${path}"; cat "${join(box.home, path)}"`);
        deepEqual(leaked(box, result.output), [], result.output);
      });
    }
  });
});

bwrapTest(
  "createSandbox() shell: an archive or encoding of the home carries no credential",
  async (t) => {
    await withViewBox(async (box) => {
      await t.step("tar | base64", async () => {
        const result = await box.run('tar -cf - -C "$HOME" . 2>/dev/null | base64 -w0');
        deepEqual(leaked(box, fromBase64(result.output)), []);
      });
      await t.step("grep -r and find", async () => {
        const result = await box.run(
          `grep -ra PLANTED "$HOME" "${box.root}" 2>/dev/null | head -5; find "${box.root}" -type f`,
        );
        deepEqual(leaked(box, result.output), [], result.output);
        ok(!result.output.includes("projects/other"), result.output);
      });
      await t.step("od, xxd-like dumps and python", async () => {
        const result = await box.run(
          'for f in $(find "$HOME" -type f 2>/dev/null); do od -c "$f"; done; ' +
            "python3 -c \"import os,glob; print([open(p).read() for p in glob.glob(os.path.expanduser('~/**/*'), recursive=True, include_hidden=True) if os.path.isfile(p)])\" 2>&1",
        );
        deepEqual(leaked(box, result.output.replace(/\s+/g, "")), []);
        deepEqual(leaked(box, result.output), []);
      });
    });
  },
);

bwrapTest(
  "createSandbox() shell: a link in the workspace does not reach a hidden home file",
  async () => {
    await withViewBox(async (box) => {
      await Deno.symlink(join(box.home, ".aws/credentials"), join(box.ws, "creds"));
      await Deno.symlink(join(box.home, "projects/other"), join(box.ws, "other"));
      await Deno.symlink(box.home, join(box.ws, "home"));
      const result = await box.run(
        "cat creds other/.env; tar -chf - home/.aws home/.ssh home/projects/other 2>/dev/null | base64 -w0",
      );
      deepEqual(leaked(box, result.output), []);
      deepEqual(leaked(box, fromBase64(result.output.split("\n").pop() ?? "")), []);
    });
  },
);

bwrapTest("createSandbox() shell: the allowlisted toolchain entries stay readable", async () => {
  await withViewBox(async (box) => {
    for (const [path, text] of Object.entries(TOOLCHAIN)) {
      const result = await box.run(`cat "$HOME/${path}"`);
      equal(result.code, 0, `${path}: ${result.output}`);
      equal(result.output, text);
    }
    // The workspace inside the home is there, writable.
    const write = await box.run("echo ok > made.txt && cat README.md made.txt");
    equal(write.output, "workspace\nok\n");
  });
});

bwrapTest(
  "createSandbox() shell: tern's home is invisible, beside the home or inside it",
  async (t) => {
    for (const ternHomeInHome of [false, true]) {
      await t.step(ternHomeInHome ? "~/.tern" : "TERN_HOME elsewhere", async () => {
        await withViewBox(async (box) => {
          const result = await box.run(
            `cat "${box.ternHome}/config.jsonc"; ls -a "${box.ternHome}"; echo x > "${box.ternHome}/new"`,
          );
          ok(!result.output.includes("TERN-HOME-SECRET"), result.output);
          ok(!(await Deno.lstat(join(box.ternHome, "new")).then(() => true, () => false)));
        }, { ternHomeInHome });
      });
    }
  },
);

bwrapTest("createSandbox() shell: sandbox.homeAllow shows exactly the paths it names", async () => {
  await withViewBox(async (box) => {
    const result = await box.run(
      'cat "$HOME/.gradle/gradle.properties"; echo ---; cat "$HOME/.m2/settings.xml"',
    );
    const [shown, hidden] = result.output.split("---");
    deepEqual(leaked(box, shown), [".gradle/gradle.properties"]);
    deepEqual(leaked(box, hidden), []);
  }, { homeAllow: ["~/.gradle/gradle.properties"] });
});

bwrapTest(
  "createSandbox() shell: sandbox.homeAllow cannot show tern's home or the whole home",
  async () => {
    await withViewBox(async (box) => {
      const result = await box.run('cat "$HOME/.tern/config.jsonc" "$HOME/.aws/credentials"');
      ok(!result.output.includes("TERN-HOME-SECRET"), result.output);
      deepEqual(leaked(box, result.output), []);
    }, { homeAllow: ["~", "~/.tern", "/"], ternHomeInHome: true });
  },
);
