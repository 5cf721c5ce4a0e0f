/**
 * What tern reads in its own process to give to the model (context files at the workspace and
 * nested, `MEMORY.md` and its topic files, `APPEND_SYSTEM.md`, skills and their files) never
 * carries what the sandbox keeps from commands: a file the person's deny rules hide, a home
 * secret location or tern's home, a file outside the workspace. Whether a repository ships the
 * symlink or the model makes it, the secret is in no request the model server receives, and
 * the run still succeeds. Plain files and symlinks inside the workspace keep working. The real
 * `tern run` against the scripted model server.
 */
import { equal, ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { type RecordedRequest, startScriptedServer } from "../support/scripted_server.ts";
import { runTern, type TernRun } from "../support/tern_process.ts";

/** The person's deny rules, in `~/.tern/config.jsonc`. */
const DENY_RULES = {
  rules: [{ action: "deny", path: "**/.env" }, { action: "deny", path: "secrets/**" }],
};

/** One tool call the scripted model makes, one per turn. */
interface Call {
  name: string;
  args: Record<string, unknown>;
}

/** What a run left: tern's output and every request the model server received. */
interface Ran {
  run: TernRun;
  requests: RecordedRequest[];
}

/** A temporary home folder; tern's home is its `.tern`. */
async function tempHome(): Promise<{ home: string; cleanup(): Promise<void> }> {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-model-reads-" }));
  await Deno.mkdir(join(home, ".tern"));
  return { home, cleanup: () => Deno.remove(home, { recursive: true }) };
}

/** Writes `text` at `path`, its folders first. */
function put(path: string, text: string): void {
  Deno.mkdirSync(dirname(path), { recursive: true });
  Deno.writeTextFileSync(path, text);
}

/** Makes `path` a symlink to `target` (as written), its folders first. */
function link(target: string, path: string): void {
  Deno.mkdirSync(dirname(path), { recursive: true });
  Deno.symlinkSync(target, path);
}

/** A skill's `SKILL.md` at `dir` in the Agent Skills format. */
function skill(dir: string, name: string, body: string): void {
  put(join(dir, "SKILL.md"), `---\nname: ${name}\ndescription: ${name} notes\n---\n${body}\n`);
}

/** `git init` in `dir`, without the machine's git configuration. */
function gitInit(dir: string): void {
  const out = new Deno.Command("git", {
    args: ["init", "--quiet", dir],
    env: { GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
  }).outputSync();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
}

/**
 * `tern run` in `cwd` with HOME `home` (tern's home `home/.tern`) against a model that makes
 * `calls`, one per turn, call i with id `c<i>`, then answers "done".
 */
async function runScripted(
  cwd: string,
  home: string,
  calls: Call[],
  extra: string[] = [],
): Promise<Ran> {
  const script = (request: ModelRequest): ScriptedReply => {
    const answered = request.messages.filter((m) => m.role === "tool").length;
    if (answered >= calls.length) return { text: "done" };
    const { name, args } = calls[answered];
    return { toolCalls: [{ id: `c${answered}`, name, arguments: JSON.stringify(args) }] };
  };
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  try {
    const run = await runTern(
      ["run", "--base-url", server.baseUrl, "-m", "scripted", ...extra, "go"],
      {
        cwd,
        env: { HOME: home, TERN_HOME: join(home, ".tern"), TERN_API_KEY: "sk-test-x" },
      },
    );
    return { run, requests: server.requests };
  } finally {
    await server.close();
  }
}

/** Fails naming each of `secrets` that some request's body holds, and the requests. */
function noRequestHolds({ requests }: Ran, ...secrets: string[]): void {
  const bodies = requests.map((request) => JSON.stringify(request.body));
  const sent = secrets.flatMap((secret) => {
    const holding = bodies.flatMap((body, i) => body.includes(secret) ? [i] : []);
    return holding.length === 0 ? [] : [`${secret} (requests ${holding.join(", ")})`];
  });
  equal(sent.length, 0, `Sent to the model: ${sent.join("; ")}`);
}

/** Fails unless some request's body holds `marker`. */
function someRequestHolds({ requests }: Ran, marker: string): void {
  ok(
    requests.some((request) => JSON.stringify(request.body).includes(marker)),
    `${marker} never reached the model`,
  );
}

/** The result of call `id` as the model got it (the last request that holds it). */
function toolResult({ requests }: Ran, id: string): string {
  for (const request of requests.toReversed()) {
    const message = request.modelRequest.messages.find((m) =>
      m.role === "tool" && m.toolCallId === id
    );
    if (message !== undefined) return String(message.content);
  }
  throw new Error(`No request holds the result of call ${id}`);
}

/** Fails unless the result of call `id` is an error or names `path` (a refusal). */
function refused(ran: Ran, id: string, path: string): void {
  const result = toolResult(ran, id);
  ok(!result.startsWith("SUCCEEDED") || result.includes(path), result);
}

Deno.test("tern run never sends context or memory files a repository links to denied files", async () => {
  const { home, cleanup } = await tempHome();
  const ws = join(home, "ws");
  try {
    put(join(home, ".tern", "config.jsonc"), JSON.stringify(DENY_RULES));
    gitInit(ws);
    put(join(ws, "secrets", "key.txt"), "KEY-SECRET-I-3b9d1f\n");
    put(join(ws, "backend", ".env"), "ENV-SECRET-I-c47a20\n");
    link("secrets/key.txt", join(ws, "AGENTS.md"));
    link("backend/.env", join(ws, "MEMORY.md"));
    const ran = await runScripted(ws, home, []);
    equal(ran.run.code, 0, ran.run.stderr);
    ok(ran.requests.length > 0, "the model was asked");
    noRequestHolds(ran, "KEY-SECRET-I-3b9d1f", "ENV-SECRET-I-c47a20");
  } finally {
    await cleanup();
  }
});

Deno.test("tern run never sends memory topic files or APPEND_SYSTEM.md linked to denied files", async () => {
  const { home, cleanup } = await tempHome();
  const ws = join(home, "ws");
  try {
    put(join(home, ".tern", "config.jsonc"), JSON.stringify(DENY_RULES));
    gitInit(ws);
    // A topic file's first line goes into the system prompt's memory index: here a plain file,
    // found through a topics folder that is a symlink to a denied one.
    put(join(ws, "secrets", "topic.md"), "# TOPIC-SECRET-1e6a95\n");
    put(join(ws, "backend", ".env"), "APPEND-SECRET-8c02d7\n");
    put(join(ws, "MEMORY.md"), "# Memory\n");
    link("../secrets", join(ws, ".tern", "memory"));
    link("../backend/.env", join(ws, ".tern", "APPEND_SYSTEM.md"));
    const ran = await runScripted(ws, home, []);
    equal(ran.run.code, 0, ran.run.stderr);
    ok(ran.requests.length > 0, "the model was asked");
    noRequestHolds(ran, "TOPIC-SECRET-1e6a95", "APPEND-SECRET-8c02d7");
  } finally {
    await cleanup();
  }
});

Deno.test("tern run never sends context or memory files linked to where a denied link leads", async () => {
  const { home, cleanup } = await tempHome();
  const ws = join(home, "ws");
  try {
    put(join(home, ".tern", "config.jsonc"), JSON.stringify(DENY_RULES));
    gitInit(ws);
    // The sandbox's view hides where a link the rules match leads: `vault/`, `config/prod.env`.
    put(join(ws, "vault", "key.txt"), "VAULT-SECRET-L-6d1f08\n");
    put(join(ws, "config", "prod.env"), "PROD-SECRET-L-a93c52\n");
    link("vault", join(ws, "secrets"));
    link("config/prod.env", join(ws, ".env"));
    link("vault/key.txt", join(ws, "AGENTS.md"));
    link("config/prod.env", join(ws, "MEMORY.md"));
    const ran = await runScripted(ws, home, []);
    equal(ran.run.code, 0, ran.run.stderr);
    ok(ran.requests.length > 0, "the model was asked");
    noRequestHolds(ran, "VAULT-SECRET-L-6d1f08", "PROD-SECRET-L-a93c52");
    ok(ran.run.stderr.includes("AGENTS.md"), `the skipped file is named: ${ran.run.stderr}`);
  } finally {
    await cleanup();
  }
});

Deno.test("code_search and code_symbols in tern run never answer where a denied link leads", async () => {
  const { home, cleanup } = await tempHome();
  const ws = join(home, "ws");
  try {
    put(join(home, ".tern", "config.jsonc"), JSON.stringify(DENY_RULES));
    gitInit(ws);
    put(join(ws, "vault", "key.ts"), "export const vaultTokenK5 = 'VAULT_TOKEN_K5_77e2c4';\n");
    put(
      join(ws, "src", "app.ts"),
      "export function openVaultClientK5() { return 'APP-MARK-K5'; }\n",
    );
    link("vault", join(ws, "secrets"));
    const ran = await runScripted(ws, home, [
      { name: "code_search", args: { query: "vaultTokenK5" } },
      { name: "code_symbols", args: { name: "vaultTokenK5" } },
      { name: "code_search", args: { query: "openVaultClientK5" } },
    ]);
    equal(ran.run.code, 0, ran.run.stderr);
    noRequestHolds(ran, "VAULT_TOKEN_K5_77e2c4");
    for (const id of ["c0", "c1"]) ok(!toolResult(ran, id).includes("vault/"), toolResult(ran, id));
    // The search itself works: the project's own code is found.
    ok(toolResult(ran, "c2").includes("APP-MARK-K5"), toolResult(ran, "c2"));
  } finally {
    await cleanup();
  }
});

Deno.test("tern run never sends a file outside a project without .git when the home folder is a repository", async () => {
  const { home, cleanup } = await tempHome();
  const ws = join(home, "projects", "evil");
  try {
    gitInit(home);
    put(join(home, ".ssh", "id_ed25519"), "SSH-KEY-F-0d8e4b\n");
    link("../../.ssh/id_ed25519", join(ws, "AGENTS.md"));
    const ran = await runScripted(ws, home, []);
    equal(ran.run.code, 0, ran.run.stderr);
    ok(ran.requests.length > 0, "the model was asked");
    noRequestHolds(ran, "SSH-KEY-F-0d8e4b");
  } finally {
    await cleanup();
  }
});

testWith(
  [bwrapNeed],
  "tern run never appends a nested AGENTS.md the model linked to a denied file",
  async () => {
    const { home, cleanup } = await tempHome();
    const ws = join(home, "ws");
    try {
      put(join(home, ".tern", "config.jsonc"), JSON.stringify(DENY_RULES));
      gitInit(ws);
      put(join(ws, "backend", ".env"), "ENV-SECRET-D-5a7c33\n");
      const ran = await runScripted(ws, home, [
        { name: "bash", args: { command: "mkdir docs; ln -s ../backend/.env docs/AGENTS.md" } },
        { name: "list", args: { path: "docs" } },
      ], ["--mode", "bypass"]);
      equal(ran.run.code, 0, ran.run.stderr);
      ok(Deno.lstatSync(join(ws, "docs", "AGENTS.md")).isSymlink, "the model made the link");
      ok(toolResult(ran, "c1").includes("AGENTS.md"), "list ran and shows the link");
      noRequestHolds(ran, "ENV-SECRET-D-5a7c33");
    } finally {
      await cleanup();
    }
  },
);

testWith(
  [bwrapNeed],
  "tern run never appends a nested AGENTS.md linked into a folder a link the model made hides",
  async () => {
    const { home, cleanup } = await tempHome();
    const ws = join(home, "ws");
    try {
      put(join(home, ".tern", "config.jsonc"), JSON.stringify(DENY_RULES));
      gitInit(ws);
      put(join(ws, "vault", "key.txt"), "VAULT-SECRET-M-2b7e64\n");
      // Before the command nothing hides `vault/`: the search the first list made (for its
      // nested context files) must be made again once the command linked `secrets` to it.
      const ran = await runScripted(ws, home, [
        { name: "list", args: { path: "." } },
        {
          name: "bash",
          args: {
            command: "ln -s vault secrets; mkdir docs; ln -s ../vault/key.txt docs/AGENTS.md",
          },
        },
        { name: "list", args: { path: "docs" } },
      ], ["--mode", "bypass"]);
      equal(ran.run.code, 0, ran.run.stderr);
      ok(Deno.lstatSync(join(ws, "secrets")).isSymlink, "the model made the link");
      ok(toolResult(ran, "c2").includes("AGENTS.md"), "list ran and shows the link");
      noRequestHolds(ran, "VAULT-SECRET-M-2b7e64");
    } finally {
      await cleanup();
    }
  },
);

Deno.test("tern run in the home folder never appends nested context files linked to home secrets", async () => {
  const { home, cleanup } = await tempHome();
  try {
    put(join(home, ".ssh", "id_ed25519"), "SSH-KEY-E-92f0aa\n");
    put(join(home, ".aws", "credentials"), "AWS-SECRET-E-61bd04\n");
    put(join(home, ".tern", "notes.txt"), "TERN-HOME-SECRET-E-d3e5f8\n");
    link("../.ssh/id_ed25519", join(home, "a", "AGENTS.md"));
    link("../.aws/credentials", join(home, "b", "AGENTS.md"));
    link("../.tern/notes.txt", join(home, "c", "CLAUDE.md"));
    const ran = await runScripted(home, home, [
      { name: "list", args: { path: "a" } },
      { name: "list", args: { path: "b" } },
      { name: "list", args: { path: "c" } },
    ]);
    equal(ran.run.code, 0, ran.run.stderr);
    toolResult(ran, "c2");
    noRequestHolds(ran, "SSH-KEY-E-92f0aa", "AWS-SECRET-E-61bd04", "TERN-HOME-SECRET-E-d3e5f8");
  } finally {
    await cleanup();
  }
});

Deno.test("the skill tool refuses a skill file that leads to a denied file", async () => {
  const { home, cleanup } = await tempHome();
  const ws = join(home, "ws");
  try {
    put(join(home, ".tern", "config.jsonc"), JSON.stringify(DENY_RULES));
    gitInit(ws);
    // The repository makes its root a skills root: every folder with a SKILL.md is a skill.
    link("..", join(ws, ".agents", "skills"));
    skill(join(ws, "backend"), "backend", "Use the backend.");
    put(join(ws, "backend", ".env"), "ENV-SECRET-A-7e41c9\n");
    // Named `.agents/skills/secrets/key.txt`, it leads to `secrets/key.txt`, which is denied.
    skill(join(ws, "secrets"), "keys", "The keys.");
    put(join(ws, "secrets", "key.txt"), "KEY-SECRET-A-f2085b\n");
    const ran = await runScripted(ws, home, [
      { name: "skill", args: { name: "backend", file: ".env" } },
      { name: "skill", args: { name: "keys", file: "key.txt" } },
    ]);
    equal(ran.run.code, 0, ran.run.stderr);
    noRequestHolds(ran, "ENV-SECRET-A-7e41c9", "KEY-SECRET-A-f2085b");
    refused(ran, "c0", ".env");
    refused(ran, "c1", "key.txt");
  } finally {
    await cleanup();
  }
});

Deno.test("the skill tool in the home folder refuses a skill file in a home secret location", async () => {
  const { home, cleanup } = await tempHome();
  try {
    link("..", join(home, ".agents", "skills"));
    skill(join(home, ".cargo"), "cargo", "cargo notes");
    put(join(home, ".cargo", "credentials.toml"), "CARGO-SECRET-C-4c9e17\n");
    skill(join(home, ".config"), "conf", "conf notes");
    put(join(home, ".config", "gh", "hosts.yml"), "GH-SECRET-C-b8d2e0\n");
    const ran = await runScripted(home, home, [
      { name: "skill", args: { name: "cargo", file: "credentials.toml" } },
      { name: "skill", args: { name: "conf", file: "gh/hosts.yml" } },
    ]);
    equal(ran.run.code, 0, ran.run.stderr);
    noRequestHolds(ran, "CARGO-SECRET-C-4c9e17", "GH-SECRET-C-b8d2e0");
    refused(ran, "c0", "credentials.toml");
    refused(ran, "c1", "hosts.yml");
  } finally {
    await cleanup();
  }
});

Deno.test("tern run still sends context files, memory and skills linked inside the workspace", async () => {
  const { home, cleanup } = await tempHome();
  const ws = join(home, "ws");
  try {
    put(join(home, ".tern", "config.jsonc"), JSON.stringify(DENY_RULES));
    gitInit(ws);
    put(join(ws, "AGENTS.md"), "Use tabs. AGENTS-MARK-21c7\n");
    link("AGENTS.md", join(ws, "CLAUDE.md"));
    put(join(ws, "docs", "memory.md"), "The build is slow. MEMORY-MARK-93fa\n");
    link("docs/memory.md", join(ws, "MEMORY.md"));
    put(join(ws, "docs", "pkg.md"), "Test pkg alone. NESTED-MARK-5b08\n");
    link("../docs/pkg.md", join(ws, "pkg", "CLAUDE.md"));
    skill(join(ws, ".agents", "skills", "deploy"), "deploy", "Deploy with care. SKILL-MARK-e61d");
    put(join(ws, ".agents", "skills", "deploy", "checklist.md"), "CHECKLIST-MARK-0c4f\n");
    const ran = await runScripted(ws, home, [
      { name: "list", args: { path: "pkg" } },
      { name: "skill", args: { name: "deploy" } },
      { name: "skill", args: { name: "deploy", file: "checklist.md" } },
    ]);
    equal(ran.run.code, 0, ran.run.stderr);
    const first = JSON.stringify(ran.requests[0].body);
    ok(first.includes("AGENTS-MARK-21c7"), "AGENTS.md is in the system prompt");
    ok(first.includes("MEMORY-MARK-93fa"), "MEMORY.md is in the system prompt");
    someRequestHolds(ran, "NESTED-MARK-5b08");
    someRequestHolds(ran, "SKILL-MARK-e61d");
    someRequestHolds(ran, "CHECKLIST-MARK-0c4f");
  } finally {
    await cleanup();
  }
});
