/**
 * `tern acp` reading a linked file through an editor that answers `fs/read_text_file` with
 * megabytes of text: only what the message keeps (ATTACHED_FILE_CHARS) is masked, not the whole
 * answer, and a key the cut parts is never shown in part. Driven by the ACP SDK's own client.
 */
import { type ContentBlock, methods } from "@agentclientprotocol/sdk";
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { ATTACHED_FILE_CHARS } from "../../src/cli/acp/prompt.ts";
import { withBench } from "../support/acp_bench.ts";

/** A key tern knows (its provider's) that no key format matches. */
const KNOWN = "zq9XkL2mP8vN4rTQwY1uB3cE5hJ7";

Deno.test("tern acp masks only the kept part of a huge editor buffer, no key cut in half", async () => {
  const cases = [
    // A format key parted by the cut: its first 10 characters fall in the kept part.
    `sk-ant-${"a1".repeat(20)}`,
    // A key tern holds, parted by the cut.
    KNOWN,
  ];
  await withBench(cases.map(() => ({ text: "ok" })), async ({ connect, dir, requests }) => {
    await Deno.writeTextFile(join(dir, "big.txt"), "on disk\n");
    await connect(async (ctx, editor) => {
      const { sessionId } = await ctx.request(methods.agent.session.new, {
        cwd: dir,
        mcpServers: [],
      });
      for (const [index, key] of cases.entries()) {
        const line = "word another word, more words; and so on\n";
        const head = line.repeat(Math.ceil(ATTACHED_FILE_CHARS / line.length)).slice(
          0,
          ATTACHED_FILE_CHARS - 10,
        );
        // About what the masker takes longest on: a quoted password every 20 characters.
        const slow = 'password="abcdefgh ';
        const text = `${head} ${key} ${slow.repeat(5 * 1024 * 1024 / slow.length)}`;
        let answered = 0;
        editor.read = () => {
          answered = performance.now();
          return text;
        };
        const { stopReason } = await ctx.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [
            { type: "text", text: "look" },
            { type: "resource_link", uri: `file://${join(dir, "big.txt")}`, name: "big.txt" },
          ],
        });
        const took = performance.now() - answered;
        equal(stopReason, "end_turn");
        const messages = requests[index].body.messages as Array<{ content: string }>;
        const sent = messages.at(-1)!.content;
        ok(sent.includes("word another word"), sent.slice(0, 200));
        ok(
          /more characters not included|cut: the editor.s buffer has/.test(sent),
          sent.slice(-300),
        );
        ok(!sent.includes(key.slice(0, 4)), sent.slice(-300));
        ok(sent.length < ATTACHED_FILE_CHARS + 1000, `${sent.length}`);
        // Masking all 5 MB held tern for seconds; the kept part takes milliseconds.
        ok(took < 2500, `the prompt took ${Math.round(took)} ms after the editor's answer`);
      }
    });
  }, { env: { TERN_API_KEY: KNOWN, TERN_CONTEXT_WINDOW: "1000000" } });
});

Deno.test("tern acp asks the editor for no more files once a prompt's files fill the budget", async () => {
  const links = 40;
  await withBench([{ text: "ok" }], async ({ connect, dir, requests }) => {
    await connect(async (ctx, editor) => {
      const { sessionId } = await ctx.request(methods.agent.session.new, {
        cwd: dir,
        mcpServers: [],
      });
      let asked = 0;
      editor.read = () => {
        asked++;
        return "x".repeat(ATTACHED_FILE_CHARS + 1000);
      };
      const prompt: ContentBlock[] = [{ type: "text", text: "look" }];
      for (let i = 0; i < links; i++) {
        await Deno.writeTextFile(join(dir, `f${i}.txt`), "on disk\n");
        const uri = `file://${join(dir, `f${i}.txt`)}`;
        prompt.push({ type: "resource_link", uri, name: `f${i}.txt` });
      }
      const { stopReason } = await ctx.request(methods.agent.session.prompt, { sessionId, prompt });
      equal(stopReason, "end_turn");
      ok(asked <= 21, `the editor was asked for ${asked} files`);
      const messages = requests[0].body.messages as Array<{ content: string }>;
      const sent = messages.at(-1)!.content;
      ok(sent.includes(`Cannot read f${links - 1}.txt`), sent.slice(-300));
      ok(sent.includes("the prompt's files passed"), sent.slice(-300));
    });
  }, { env: { TERN_CONTEXT_WINDOW: "10000000" } });
});
