/**
 * A fake home folder full of planted credentials, a workspace inside it, and the sandbox a run
 * builds for them (`createSandbox`, the real plan and bubblewrap), for the view tests. HOME is
 * the fake one: nothing depends on the real home.
 */
import { dirname, join } from "node:path";
import { createSandbox, type SandboxRuntime } from "../../src/sandbox/runtime.ts";
import type { ShellResult } from "../../src/sandbox/types.ts";

/** Home-relative paths where credentials are planted: each holds a unique marker. */
export const PLANTED: readonly string[] = [
  ".aws/credentials",
  ".ssh/id_rsa",
  ".ssh/id_ed25519",
  ".docker/config.json",
  ".npmrc",
  ".pypirc",
  ".netrc",
  ".git-credentials",
  ".config/gh/hosts.yml",
  ".kube/config",
  ".bash_history",
  ".zsh_history",
  ".python_history",
  ".psql_history",
  ".local/share/fish/fish_history",
  ".claude/.credentials.json",
  ".claude.json",
  ".codex/auth.json",
  ".config/github-copilot/hosts.json",
  ".gemini/oauth_creds.json",
  ".mozilla/firefox/abc.default/logins.json",
  ".config/google-chrome/Default/Login Data",
  ".config/Code/User/globalStorage/state.vscdb",
  "projects/other/.env",
  "projects/other/secrets.json",
  ".env",
  ".gnupg/private-keys-v1.d/key.key",
  ".config/gcloud/application_default_credentials.json",
  ".azure/msal_token_cache.json",
  ".terraform.d/credentials.tfrc.json",
  ".m2/settings.xml",
  ".gradle/gradle.properties",
  ".vault-token",
  ".pgpass",
  ".local/share/keyrings/login.keyring",
  // Inside folders the allowlist shows: hidden all the same.
  ".cargo/credentials.toml",
  ".config/git/credentials",
  ".cache/huggingface/token",
];

/** Allowlisted files planted too: these must stay readable. */
export const TOOLCHAIN: Record<string, string> = {
  ".gitconfig": "[user]\n\tname = Test\n",
  ".cargo/bin/tool": "TOOL-VISIBLE\n",
  ".cache/pip/http/x": "CACHE-VISIBLE\n",
  ".config/git/ignore": "IGNORE-VISIBLE\n",
};

export interface ViewBox {
  root: string;
  home: string;
  ws: string;
  ternHome: string;
  /** Marker of each planted path. */
  markers: Map<string, string>;
  runtime: SandboxRuntime;
  run(command: string): Promise<ShellResult>;
}

/** Options for {@linkcode withViewBox}. */
export interface ViewBoxOptions {
  homeAllow?: string[];
  /** tern's home inside the fake home (`~/.tern`) rather than beside it. */
  ternHomeInHome?: boolean;
  profile?: string;
}

/** Runs `fn` with a fresh box and its sandbox; removes both afterwards. */
export async function withViewBox(
  fn: (box: ViewBox) => Promise<void>,
  options: ViewBoxOptions = {},
): Promise<void> {
  // Not under /tmp: the sandbox's private /tmp would hide it without the view's help.
  const root = await Deno.realPath(
    await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_view_" }),
  );
  const home = join(root, "home");
  const ws = join(home, "projects", "app");
  const ternHome = options.ternHomeInHome ? join(home, ".tern") : join(root, "tern-home");
  const markers = new Map<string, string>();
  const write = async (relative: string, text: string) => {
    await Deno.mkdir(dirname(join(home, relative)), { recursive: true });
    await Deno.writeTextFile(join(home, relative), text);
  };
  for (const [index, path] of PLANTED.entries()) {
    const marker = `PLANTED-${index}-${crypto.randomUUID()}`;
    markers.set(path, marker);
    await write(path, `${marker}\n`);
  }
  for (const [path, text] of Object.entries(TOOLCHAIN)) await write(path, text);
  await Deno.mkdir(join(ws, "src"), { recursive: true });
  await Deno.writeTextFile(join(ws, "README.md"), "workspace\n");
  await Deno.mkdir(ternHome, { recursive: true });
  await Deno.writeTextFile(join(ternHome, "config.jsonc"), `{"model": "TERN-HOME-SECRET"}\n`);
  const runtime = await createSandbox({
    workspace: ws,
    profile: options.profile ?? ":workspace",
    noSandbox: false,
    home,
    homeAllow: options.homeAllow,
    ternHome,
    env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: home },
    handlerUrl: new URL("../../src/tools/worker_handler.ts", import.meta.url),
    runId: "view-test",
  });
  try {
    await fn({
      root,
      home,
      ws,
      ternHome,
      markers,
      runtime,
      // Every command ends by saying it ran: a sandbox that fails to start leaks nothing and
      // proves nothing.
      run: async (command) => {
        const result = await runtime.shell(`${command}\necho "<ran>"`, {
          cwd: ws,
          timeoutMs: 60_000,
        });
        if (!result.output.endsWith("<ran>\n")) {
          throw new Error(`The command did not run to its end: ${result.output}`);
        }
        return { ...result, output: result.output.slice(0, -"<ran>\n".length) };
      },
    });
  } finally {
    await runtime.close();
    await Deno.remove(root, { recursive: true });
  }
}

/** Every planted marker that appears in `text`. */
export function leaked(box: ViewBox, text: string): string[] {
  return [...box.markers].filter(([, marker]) => text.includes(marker)).map(([path]) => path);
}
