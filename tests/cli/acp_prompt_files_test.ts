/**
 * `tern acp`: the files a prompt links or embeds meet the read guard, as the terminal's `@`
 * mentions do: what the model could not read with its own tools is never asked of the editor,
 * never sent to the model, and the person is told. Driven by the ACP SDK's own client.
 */
import { methods } from "@agentclientprotocol/sdk";
import { deepEqual, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { agentText, withBench } from "../support/acp_bench.ts";

const KEY = "sk-guard-KEYVALUE0123456789abcdefXYZ";

Deno.test("tern acp attaches no linked or embedded file the model could not read itself", async () => {
  await withBench([{ text: "read them" }], async ({ connect, dir, home, requests }) => {
    // A repository's link to the person's SSH key, a `.env` holding tern's key, a file the
    // person's deny rule hides; and one ordinary file.
    await Deno.mkdir(join(home, ".ssh"));
    await Deno.writeTextFile(join(home, ".ssh", "id_rsa"), "SSH-SECRET-77\n");
    await Deno.symlink(join(home, ".ssh", "id_rsa"), join(dir, "notes.md"));
    await Deno.writeTextFile(join(dir, ".env"), `TERN_API_KEY=${KEY}\nDB=DOTENV-SECRET-88\n`);
    await Deno.writeTextFile(
      join(home, "config.jsonc"),
      JSON.stringify({ rules: [{ action: "deny", path: "private/**" }] }),
    );
    await Deno.mkdir(join(dir, "private"));
    await Deno.writeTextFile(join(dir, "private", "p.txt"), "DENIED-SECRET-99\n");
    await Deno.writeTextFile(join(dir, "ok.md"), "OPEN-MARK\n");
    const asked: string[] = [];
    await connect(async (ctx, editor) => {
      // An editor reads the file from disk, following links, as editors do.
      editor.read = (path) => {
        asked.push(path);
        return Deno.readTextFileSync(path);
      };
      const { sessionId } = await ctx.request(methods.agent.session.new, {
        cwd: dir,
        mcpServers: [],
      });
      const link = (name: string) => ({
        type: "resource_link" as const,
        uri: `file://${join(dir, name)}`,
        name,
      });
      await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [
          { type: "text", text: "summarise these" },
          link("notes.md"),
          link(".env"),
          link("private/p.txt"),
          link("ok.md"),
          {
            type: "resource",
            resource: { uri: `file://${join(dir, "notes.md")}`, text: "EMBEDDED-SSH-SECRET" },
          },
          { type: "resource", resource: { uri: "untitled:Untitled-1", text: "PASTED-MARK" } },
        ],
      });
      // The person is told what was left out, and why.
      const told = agentText(editor);
      match(told, /\[tern: not attached: file:\/\/\S*notes\.md: it leads to "\S*\.ssh\/id_rsa"/);
      match(told, /\[tern: not attached: file:\/\/\S*\.env: your deny rules keep "\.env"/);
      match(told, /\[tern: not attached: file:\/\/\S*p\.txt: your deny rules keep "private/);
    });
    // The editor was asked for the ordinary file only.
    deepEqual(asked, [join(dir, "ok.md")]);
    const sent = JSON.stringify(requests.map((request) => request.modelRequest));
    for (const secret of ["SSH-SECRET", "DOTENV-SECRET", "DENIED-SECRET", "KEYVALUE0123"]) {
      ok(!sent.includes(secret), `${secret} reached the model`);
    }
    match(sent, /OPEN-MARK/);
    // Text the editor embeds under no file's name is the person's own.
    match(sent, /PASTED-MARK/);
    match(sent, /\[Not attached: file:\/\/\S*notes\.md: it leads to/);
  }, { args: ["--mode", "ask"], env: { TERN_API_KEY: KEY } });
});

Deno.test("tern acp masks the key it holds in a linked or embedded file, as the read tool does", async () => {
  await withBench([{ text: "looked" }], async ({ connect, dir, requests }) => {
    await Deno.writeTextFile(join(dir, "deploy.sh"), `curl -H "x-api-key: ${KEY}" LINKED-MARK\n`);
    await connect(async (ctx, editor) => {
      editor.read = (path) => Deno.readTextFileSync(path);
      const { sessionId } = await ctx.request(methods.agent.session.new, {
        cwd: dir,
        mcpServers: [],
      });
      const uri = `file://${join(dir, "deploy.sh")}`;
      await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [
          { type: "text", text: "check these" },
          { type: "resource_link", uri, name: "deploy.sh" },
          { type: "resource", resource: { uri, text: `unsaved ${KEY} EMBEDDED-MARK` } },
        ],
      });
    });
    const sent = JSON.stringify(requests.map((request) => request.modelRequest));
    match(sent, /LINKED-MARK/);
    match(sent, /EMBEDDED-MARK/);
    ok(!sent.includes("KEYVALUE0123"), "the key reached the model");
  }, { args: ["--mode", "ask"], env: { TERN_API_KEY: KEY } });
});
