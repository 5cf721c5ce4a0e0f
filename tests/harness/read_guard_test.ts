/**
 * What tern reads in its own process for the model (src/harness/read_guard.ts) stays within what
 * the model could read with its own tools: no home secret location or tern's home, nothing the
 * person's deny rules hide, by the path named and by where a link leads; context files, memory,
 * skills and templates all ask the same guard. Real files and links, the real rule matcher.
 */
import { deepEqual, equal, match, ok, throws } from "node:assert/strict";
import { join } from "node:path";
import type { PermissionRule } from "../../src/config/schema.ts";
import { modelReadGuard } from "../../src/harness/read_guard.ts";
import {
  hiddenInWorkspace,
  type WorkspaceHidden,
  WorkspaceHiddenSearch,
} from "../../src/harness/path_denials.ts";
import { readPromptFiles } from "../../src/memory/context_files.ts";
import { readMemoryFiles } from "../../src/memory/memory_files.ts";
import { discoverSkills, readSkillFile } from "../../src/memory/skills.ts";
import { discoverTemplates } from "../../src/memory/templates.ts";

const RULES: PermissionRule[] = [
  { action: "deny", path: "**/.env" },
  { action: "deny", path: "secrets" },
];

async function withHome(fn: (home: string) => Promise<void>): Promise<void> {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-read-guard-" }));
  try {
    await fn(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

function write(path: string, text: string): void {
  Deno.mkdirSync(join(path, ".."), { recursive: true });
  Deno.writeTextFileSync(path, text);
}

Deno.test("modelReadGuard() refuses secret locations, tern's home and denied paths, by name and by target", async () => {
  await withHome(async (home) => {
    const ws = join(home, "ws");
    Deno.mkdirSync(ws);
    const ternHome = join(home, ".tern");
    const refuse = await modelReadGuard({ workspace: ws, ternHome, home, rules: RULES });
    equal(refuse(join(ws, "src", "a.ts"), join(ws, "src", "a.ts")), undefined);
    match(refuse(join(home, ".ssh", "id_ed25519"), join(ws, "AGENTS.md"))!, /\.ssh/);
    match(refuse(join(ternHome, "notes.txt"), join(ws, "AGENTS.md"))!, /\.tern/);
    match(refuse(join(ws, "backend", ".env"), join(ws, "docs", "AGENTS.md"))!, /"backend\/\.env"/);
    // The path as named counts too, and a folder a rule names hides what is in it.
    match(refuse(join(ws, "notes.md"), join(ws, ".env"))!, /"\.env"/);
    match(refuse(join(ws, "secrets", "deep", "key.txt"), join(ws, "x.md"))!, /"secrets"/);
    // Above the workspace (a repository root's file), a rule matches the file's name.
    match(refuse(join(home, ".env"), join(home, "AGENTS.md"))!, /"\.env"/);
    // No rules: only the secret locations.
    const plain = await modelReadGuard({ workspace: ws, ternHome, home, rules: [] });
    equal(plain(join(ws, ".env"), join(ws, ".env")), undefined);
    ok(plain(join(home, ".aws", "credentials"), join(ws, "a", "AGENTS.md")));
  });
});

Deno.test("modelReadGuard() refuses where a link its deny rules match leads, as the sandbox's view hides it", async () => {
  await withHome(async (home) => {
    const ws = join(home, "ws");
    const ternHome = join(home, ".tern");
    write(join(ws, "config", "prod.env"), "PROD");
    write(join(ws, "vault", "key.txt"), "VAULT");
    write(join(ws, "src", "a.ts"), "a");
    Deno.symlinkSync("config/prod.env", join(ws, ".env"));
    Deno.symlinkSync("vault", join(ws, "secrets"));
    Deno.symlinkSync("vault/key.txt", join(ws, "AGENTS.md"));
    const rules: PermissionRule[] = [
      { action: "deny", path: "**/.env" },
      { action: "deny", path: "secrets/**" },
    ];
    const refuse = await modelReadGuard({ workspace: ws, ternHome, home, rules });
    // By where the file really is, whatever it is named.
    match(refuse(join(ws, "vault", "key.txt"), join(ws, "AGENTS.md"))!, /"vault".*link/);
    match(refuse(join(ws, "config", "prod.env"), join(ws, "notes.md"))!, /"config\/prod\.env"/);
    // By the path as named too.
    match(refuse(join(ws, "src", "a.ts"), join(ws, "vault", "notes.md"))!, /"vault"/);
    equal(refuse(join(ws, "src", "a.ts"), join(ws, "src", "a.ts")), undefined);
    equal(refuse(join(ws, "config", "dev.env"), join(ws, "config", "dev.env")), undefined);

    // A search kept by the caller is asked at each file: a link made later counts once found.
    let hidden: WorkspaceHidden | Error | undefined = await hiddenInWorkspace(ws, []);
    const kept = await modelReadGuard(
      { workspace: ws, ternHome, home, rules },
      { hidden: () => hidden },
    );
    equal(kept(join(ws, "vault", "key.txt"), join(ws, "AGENTS.md")), undefined);
    hidden = await hiddenInWorkspace(ws, rules);
    ok(kept(join(ws, "vault", "key.txt"), join(ws, "AGENTS.md")));
    // A search that failed refuses every file of the workspace, and says why.
    hidden = new Error("Cannot hold your deny rules: tern cannot list the workspace");
    match(kept(join(ws, "src", "a.ts"), join(ws, "src", "a.ts"))!, /cannot list the workspace/);
  });
});

Deno.test("WorkspaceHiddenSearch keeps one search until the workspace may have changed or the rules differ", async () => {
  await withHome(async (home) => {
    const ws = join(home, "ws");
    write(join(ws, "vault", "key.txt"), "VAULT");
    const rules: PermissionRule[] = [{ action: "deny", path: "secrets/**" }];
    const search = new WorkspaceHiddenSearch(ws);
    equal(await search.current([]), undefined, "no deny rule with a path: nothing searched");
    equal((await search.current(rules))!.test("vault/key.txt"), false);
    Deno.symlinkSync("vault", join(ws, "secrets"));
    // Kept: the same answer until told the workspace may have changed.
    equal((await search.current(rules))!.test("vault/key.txt"), false);
    search.changed();
    equal((await search.current(rules))!.test("vault/key.txt"), true);
    // Other rules (a new list) search again.
    Deno.removeSync(join(ws, "secrets"));
    equal((await search.current([...rules]))!.test("vault/key.txt"), false);
  });
});

Deno.test("readPromptFiles() and readMemoryFiles() read no link to what the model may not read", async () => {
  await withHome(async (home) => {
    // The home folder is a repository (dotfiles); the project inside it has none of its own.
    Deno.mkdirSync(join(home, ".git"));
    Deno.writeTextFileSync(join(home, ".git", "HEAD"), "ref: refs/heads/main\n");
    const ws = join(home, "projects", "evil");
    const ternHome = join(home, ".tern");
    write(join(home, ".ssh", "id_ed25519"), "SSH-KEY");
    write(join(home, "other", "notes.md"), "OTHER-PROJECT");
    write(join(ws, "secrets", "key.txt"), "DENIED-KEY");
    write(join(ws, "backend", ".env"), "DENIED-ENV");
    write(join(ws, "README.md"), "readme");
    Deno.symlinkSync("../../.ssh/id_ed25519", join(ws, "AGENTS.md"));
    Deno.symlinkSync("secrets/key.txt", join(ws, "CLAUDE.md"));
    Deno.symlinkSync("backend/.env", join(ws, "MEMORY.md"));
    // Above the workspace: a link to a file in another folder, one to a file beside it that is
    // no context file (the model can read neither), and one to the AGENTS.md beside it (kept).
    Deno.symlinkSync("../other/notes.md", join(home, "projects", "AGENTS.md"));
    write(join(home, "projects", "notes.txt"), "BESIDE-NOTES");
    Deno.symlinkSync("notes.txt", join(home, "projects", "CLAUDE.md"));
    write(join(home, "AGENTS.md"), "HOME-RULES");
    Deno.symlinkSync("AGENTS.md", join(home, "CLAUDE.md"));
    const warnings: string[] = [];
    const refuse = await modelReadGuard({ workspace: ws, ternHome, home, rules: RULES });
    const warn = (line: string) => warnings.push(line);
    const files = readPromptFiles({ workspace: ws, ternHome, warn, refuse });
    const memory = readMemoryFiles(ws, ternHome, refuse, warn);
    const texts = [...files.context.map((file) => file.text), memory.project?.text].join("\n");
    for (const secret of ["SSH-KEY", "OTHER-PROJECT", "BESIDE-NOTES", "DENIED-KEY", "DENIED-ENV"]) {
      equal(texts.includes(secret), false, `${secret} was read`);
    }
    // The home's own AGENTS.md is read once (its CLAUDE.md is the same file).
    deepEqual(files.context.map((file) => file.text), ["HOME-RULES"]);
    equal(warnings.length, 5, warnings.join("\n"));

    // A plain link beside its target, inside the workspace, still reads.
    Deno.removeSync(join(ws, "AGENTS.md"));
    Deno.removeSync(join(ws, "CLAUDE.md"));
    write(join(ws, "AGENTS.md"), "PROJECT-RULES");
    Deno.symlinkSync("AGENTS.md", join(ws, "CLAUDE.md"));
    const again = readPromptFiles({ workspace: ws, ternHome, warn, refuse });
    deepEqual(again.context.map((file) => file.text), ["HOME-RULES", "PROJECT-RULES"]);
  });
});

Deno.test("a project's skills and templates read nothing the model may not read", async () => {
  await withHome(async (home) => {
    // The workspace is the home folder; the repository made its whole tree a skills root.
    const ws = home;
    const ternHome = join(home, "tern-home");
    Deno.mkdirSync(join(ws, ".agents"));
    Deno.symlinkSync("..", join(ws, ".agents", "skills"));
    const skill = (name: string) => `---\nname: ${name}\ndescription: d\n---\nbody\n`;
    write(join(ws, "backend", "SKILL.md"), skill("backend"));
    write(join(ws, "backend", ".env"), "DENIED-ENV");
    write(join(ws, "backend", "notes.md"), "NOTES");
    write(join(ws, ".cargo", "SKILL.md"), skill("cargo"));
    write(join(ws, ".cargo", "credentials.toml"), "CARGO-TOKEN");
    write(join(ws, "secrets", "SKILL.md"), skill("hidden"));
    const refuse = await modelReadGuard({ workspace: ws, ternHome, home, rules: RULES });
    const { skills } = await discoverSkills(ws, ternHome, refuse);
    const byName = new Map(skills.map((found) => [found.name, found]));
    // A SKILL.md in a folder the rules hide is not even read.
    deepEqual([...byName.keys()].sort(), ["backend", "cargo"]);
    equal(readSkillFile(byName.get("backend")!, "notes.md"), "NOTES");
    throws(() => readSkillFile(byName.get("backend")!, ".env"), /deny rules/);
    throws(() => readSkillFile(byName.get("cargo")!, "credentials.toml"), /tools may not read/);

    // A template linked to a denied file is not offered (in a project of its own: with the
    // workspace at the home folder, `.tern` is where tern keeps its home, closed to tools).
    const project = join(home, "project");
    write(join(project, "backend", ".env"), "DENIED-ENV");
    Deno.mkdirSync(join(project, ".tern", "prompts"), { recursive: true });
    Deno.symlinkSync("../../backend/.env", join(project, ".tern", "prompts", "leak.md"));
    write(join(project, ".tern", "prompts", "fine.md"), "Review the diff.");
    const inProject = await modelReadGuard({ workspace: project, ternHome, home, rules: RULES });
    const templates = await discoverTemplates(project, ternHome, inProject);
    deepEqual(templates.templates.map((template) => template.name), ["fine"]);
    match(templates.diagnostics.join("\n"), /leak\.md.*deny rules keep "backend\/\.env"/);
  });
});
