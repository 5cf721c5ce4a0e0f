/**
 * The home configuration files commands see (git's, cargo's, nvm's npmrc) are shown without the
 * tokens written into them: by name, encoded or through git itself, while what tools need from
 * them (a user name, aliases, a mirror) stays.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { HomeTokenCopies, redactConfigText, TOKEN_MARK } from "../../src/sandbox/home_tokens.ts";
import { bwrapTest } from "./_bwrap_helpers.ts";
import { withViewBox } from "./_view_box.ts";

const token = () => `T0k${crypto.randomUUID().replaceAll("-", "")}`;

Deno.test("redactConfigText(): credential values go, the rest of the file stays", () => {
  const secret = token();
  const cases: Array<[string, string]> = [
    [`[http]\n\textraHeader = AUTHORIZATION: basic ${secret}\n`, "extraHeader = "],
    [`[http "https://h.example/"]\n\textraheader = Bearer ${secret}\n`, "extraheader = "],
    [
      `[url "https://oauth2:${secret}@gitlab.example/"]\n\tinsteadOf = https://gitlab.example/\n`,
      "oauth2:",
    ],
    [
      `[url "https://${secret}@github.example/"]\n\tinsteadOf = https://github.example/\n`,
      "https://",
    ],
    [`[registry]\ntoken = "${secret}"\n`, 'token = "'],
    [`[registries.corp]\nindex = "https://r.example"\ntoken = '${secret}'\n`, "index ="],
    [`//registry.npmjs.org/:_authToken=${secret}\n`, "_authToken="],
    [`//r.example/:_auth=${secret}\n`, "_auth="],
    [`//r.example/:_password=${secret}\n`, "_password="],
    [`[sendemail]\n\tsmtpPass = ${secret}\n`, "smtpPass = "],
    [`[github]\n\toauth-token = ${secret}\n`, "oauth-token = "],
  ];
  for (const [text, kept] of cases) {
    const shown = redactConfigText(text);
    ok(!shown.includes(secret), shown);
    ok(shown.includes("[REDACTED"), shown);
    ok(shown.includes(kept), shown);
  }
  // A quoted value stays quoted: TOML and git still parse the file.
  equal(redactConfigText(`token = "${secret}"`), `token = "${TOKEN_MARK}"`);
  equal(redactConfigText(`token = '${secret}'`), `token = '${TOKEN_MARK}'`);
});

Deno.test("redactConfigText(): a value ends where its format ends it, and the file still parses", async () => {
  const secret = token();
  const cases: Array<[string, string]> = [
    // What follows the closing quote stays, so the quotes stay balanced.
    [
      `[http]\n\textraHeader = "AUTHORIZATION: Bearer ${secret}" # work token\n`,
      `[http]\n\textraHeader = "${TOKEN_MARK}" # work token\n`,
    ],
    [`token = "a\\"${secret}" # x\n`, `token = "${TOKEN_MARK}" # x\n`],
    // TOML strings over several lines, basic and literal.
    [
      `[registry]\ntoken = """\n${secret}CARGO"""\n[net]\nretry = 2\n`,
      `[registry]\ntoken = """${TOKEN_MARK}"""\n[net]\nretry = 2\n`,
    ],
    [`token = '''${secret}\nmore''' # c\n`, `token = '''${TOKEN_MARK}''' # c\n`],
    // git continues a value onto the next line after a trailing backslash.
    [
      `[http]\n\textraHeader = Bearer \\\n${secret}\n[user]\n\tname = A\n`,
      `[http]\n\textraHeader = ${TOKEN_MARK}\n[user]\n\tname = A\n`,
    ],
    [
      `[http]\r\n\textraHeader = "Bearer \\\r\n${secret}"\r\n`,
      `[http]\r\n\textraHeader = "${TOKEN_MARK}"\r\n`,
    ],
    // npm's keys may be quoted.
    [
      `"//registry.corp.example/:_auth"=${secret}NPM\n`,
      `"//registry.corp.example/:_auth"=${TOKEN_MARK}\n`,
    ],
  ];
  for (const [text, shown] of cases) equal(redactConfigText(text), shown, text);
  // git reads the copy of a file with a comment after a quoted value.
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "gitconfig");
    await Deno.writeTextFile(file, redactConfigText(cases[0][0] + "[user]\n\tname = A\n"));
    const out = await new Deno.Command("git", {
      args: ["config", "--file", file, "--list"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    equal(new TextDecoder().decode(out.stderr), "");
    equal(new TextDecoder().decode(out.stdout), `http.extraheader=${TOKEN_MARK}\nuser.name=A\n`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("redactConfigText(): a random token goes whatever its key is called", () => {
  const token = "Zq7Wm2Kp9Xv4Rt8Ly3NbHd6Fs1Gc5Jw";
  const text = [
    "[hub]",
    `\tkey = ${token}`,
    "[deploy]",
    `\tbearer = "${token.slice(0, 24)}"`,
    "[build]",
    'target = "x86_64-unknown-linux-gnu"',
    "[user]",
    "\tsigningkey = 0A46826A9E2B4C3D5F6E7A8B9C0D1E2F3A4B5C6D",
    "\tid = 123e4567-e89b-12d3-a456-426614174000",
    "\thelper = /usr/local/bin/Git-Credential-Manager2",
    "",
  ].join("\n");
  const redacted = redactConfigText(text);
  equal(redacted.includes(token.slice(0, 16)), false, redacted);
  equal(
    redacted,
    text.replace(token, "[REDACTED]").replace(`"${token.slice(0, 24)}"`, '"[REDACTED]"'),
  );
});

Deno.test("redactConfigText(): a file without credentials is unchanged", () => {
  const text = [
    "[user]",
    "\tname = Ada Lovelace",
    "\temail = ada@example.org",
    "[alias]",
    "\tco = checkout",
    "[credential]",
    "\thelper = store",
    '[url "git@github.com:"]',
    "\tinsteadOf = https://github.com/",
    '[url "ssh://git@host.example:22/"]',
    "\tpushInsteadOf = https://host.example/",
    "[core]",
    "\tsshCommand = ssh -i ~/.ssh/id_ed25519",
    "# token = in a comment, with no value to hide",
    "[source.crates-io]",
    'replace-with = "mirror"',
    "[net]",
    "git-fetch-with-cli = true",
    "registry=https://registry.npmjs.org/",
    "",
  ].join("\n");
  equal(redactConfigText(text), text);
});

Deno.test("HomeTokenCopies: files made after a look are found at the next, and copies follow edits", async () => {
  const home = await Deno.makeTempDir();
  const dir = await Deno.makeTempDir();
  try {
    const copies = new HomeTokenCopies(dir);
    deepEqual(copies.for(home, []), {});
    // Made after the look found its folder missing.
    await Deno.mkdir(join(home, ".cargo"));
    await Deno.writeTextFile(join(home, ".cargo/config.toml"), `token = "${token()}"\n`);
    const npmrc = join(home, ".nvm/versions/node/v20.1.0/etc/npmrc");
    deepEqual(Object.keys(copies.for(home, [])), [join(home, ".cargo/config.toml")]);
    await Deno.mkdir(join(npmrc, ".."), { recursive: true });
    // Its folder made, the npmrc itself is not there yet: nothing more to copy.
    deepEqual(Object.keys(copies.for(home, [])), [join(home, ".cargo/config.toml")]);
    await Deno.writeTextFile(npmrc, `//r.example/:_authToken=${token()}\n`);
    const found = copies.for(home, []);
    deepEqual(Object.keys(found).sort(), [join(home, ".cargo/config.toml"), npmrc].sort());
    equal(Deno.readTextFileSync(found[npmrc]), `//r.example/:_authToken=${TOKEN_MARK}\n`);
    // An edit without a token: the file is shown as it is, and its old copy is gone.
    await Deno.writeTextFile(npmrc, "registry=https://r.example/\n");
    const after = copies.for(home, []);
    equal(after[npmrc], undefined);
    equal(await Deno.lstat(found[npmrc]).then(() => true, () => false), false);
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("HomeTokenCopies: a config file too large to check is not shown at all", async () => {
  const home = await Deno.makeTempDir();
  const dir = await Deno.makeTempDir();
  try {
    const file = join(home, ".gitconfig");
    await Deno.writeTextFile(file, `[http]\n\textraHeader = ${token()}\n${"#".repeat(1 << 20)}\n`);
    const copy = new HomeTokenCopies(dir).for(home, [])[file];
    ok(copy !== undefined);
    match(await Deno.readTextFile(copy), /^# tern: this file is larger than 1 MiB/);
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("HomeTokenCopies: a folder's stamp is trusted only once it has settled", async () => {
  const home = await Deno.makeTempDir();
  const dir = await Deno.makeTempDir();
  try {
    const copies = new HomeTokenCopies(dir);
    // A home folder that last changed a minute ago: a missing file is not looked up again...
    const past = new Date(Date.now() - 60_000);
    await Deno.utime(home, past, past);
    deepEqual(copies.for(home, []), {});
    // ...until the folder changes, even when its modification time is put back: its change
    // time moves all the same.
    await Deno.writeTextFile(join(home, ".gitconfig"), `[http]\n\textraHeader = ${token()}\n`);
    await Deno.utime(home, past, past);
    deepEqual(Object.keys(copies.for(home, [])), [join(home, ".gitconfig")]);
    // A file changed a moment ago is read again at every look, whatever its times say.
    const file = join(home, ".gitconfig");
    const info = await Deno.stat(file);
    await Deno.writeTextFile(file, "[user]\n\tname = x\n".padEnd(info.size - 1, " ") + "\n");
    await Deno.utime(file, info.atime!, info.mtime!);
    deepEqual(copies.for(home, []), {});
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});

bwrapTest(
  "createSandbox() shell: tokens in the home's config files stay out of sight",
  async () => {
    await withViewBox(async (box) => {
      const secrets = [token(), token(), token(), token(), token()];
      const gitconfig = [
        "[user]",
        "\tname = Test",
        "[alias]",
        "\tst = status",
        "[http]",
        `\textraHeader = AUTHORIZATION: basic ${secrets[0]}`,
        `[url "https://oauth2:${secrets[1]}@gitlab.example/"]`,
        "\tinsteadOf = https://gitlab.example/",
        "",
      ].join("\n");
      await Deno.writeTextFile(join(box.home, ".gitconfig"), gitconfig);
      await Deno.writeTextFile(
        join(box.home, ".cargo/config.toml"),
        `[registry]\ntoken = "${secrets[2]}"\n[net]\nretry = 7\n`,
      );
      const npmrc = join(box.home, ".nvm/versions/node/v22.0.0/etc/npmrc");
      await Deno.mkdir(join(npmrc, ".."), { recursive: true });
      await Deno.writeTextFile(npmrc, `//registry.npmjs.org/:_authToken=${secrets[3]}\n`);
      const found = (text: string) => secrets.filter((secret) => text.includes(secret));

      const result = await box.run(
        "cat ~/.gitconfig ~/.cargo/config.toml ~/.nvm/versions/node/*/etc/npmrc; " +
          "git config --global --list; tar -cf - -C ~ .gitconfig .cargo .nvm | base64 -w0",
      );
      const tail = result.output.split("\n").at(-1) ?? "";
      const decoded = new TextDecoder().decode(Uint8Array.from(atob(tail), (c) => c.charCodeAt(0)));
      equal(found(result.output + decoded).length, 0, result.output);
      // What tools need is still there.
      const kept = await box.run(
        "git config --global user.name; git config --global alias.st; grep retry ~/.cargo/config.toml",
      );
      equal(kept.output, "Test\nstatus\nretry = 7\n");

      // The person edits the file while the run lives: the next command sees the new one, without
      // its token.
      await Deno.writeTextFile(
        join(box.home, ".gitconfig"),
        `[user]\n\tname = Changed\n[http]\n\textraHeader = Bearer ${secrets[4]}\n`,
      );
      const edited = await box.run("cat ~/.gitconfig; git config --global user.name");
      equal(found(edited.output).length, 0, edited.output);
      ok(edited.output.endsWith("Changed\n"), edited.output);

      // A file without tokens is the person's own file, not a copy.
      await Deno.writeTextFile(join(box.home, ".gitconfig"), "[user]\n\tname = Plain\n");
      const plain = await box.run("cat ~/.gitconfig");
      equal(plain.output, "[user]\n\tname = Plain\n");
    });
  },
);

bwrapTest(
  "createSandbox() shell: a linked ~/.gitconfig (dotfiles) is shown without its token",
  async () => {
    await withViewBox(async (box) => {
      const secret = token();
      await Deno.remove(join(box.home, ".gitconfig"));
      await Deno.mkdir(join(box.home, "dotfiles"));
      await Deno.writeTextFile(
        join(box.home, "dotfiles/gitconfig"),
        `[user]\n\tname = Linked\n[http]\n\textraHeader = Bearer ${secret}\n`,
      );
      await Deno.symlink(join(box.home, "dotfiles/gitconfig"), join(box.home, ".gitconfig"));
      const result = await box.run(
        `cat ~/.gitconfig; base64 -w0 ~/.gitconfig; echo; git config --global user.name`,
      );
      ok(!result.output.includes(secret), result.output);
      const encoded = result.output.split("\n").at(-3) ?? "";
      const decoded = new TextDecoder().decode(
        Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0)),
      );
      ok(!decoded.includes(secret), decoded);
      ok(result.output.endsWith("Linked\n"), result.output);
    });
  },
);
