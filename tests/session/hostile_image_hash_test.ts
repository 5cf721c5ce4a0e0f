/**
 * A session's images are named by their SHA-256: an image whose bytes are not what its recorded
 * hash says (a planted session line carrying bytes inline instead of in the session folder) is
 * never sent to the model as it: what a person is shown (the hash) is what the model gets.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../../src/core/image_part.ts";
import { createOpenAiChatProvider } from "../../src/llm/openai_chat.ts";
import { withStoredImages } from "../../src/session/images.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import { tempHome } from "./_helpers.ts";

/** A 1×1 PNG: the image a person was shown. */
const SHOWN = Uint8Array.fromBase64(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
);
/** A 1×1 GIF, sent under the PNG's hash. */
const SENT = Uint8Array.fromBase64("R0lGODlhAQABAIAAAP///wAAACwAAAAAAQABAAACAkQBADs=");

Deno.test("withStoredImages() sends no inline image whose bytes its hash does not name", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const claimed = await sha256Hex(SHOWN);
    await withScriptedServer([{ text: "ok" }, { text: "ok" }], async (server) => {
      const provider = withStoredImages(
        createOpenAiChatProvider({ baseUrl: server.baseUrl, apiKey: "sk-test" }),
        join(home, "images"),
      );
      const ask = async (data: Uint8Array, sha256: string) => {
        const messages = [{
          role: "user" as const,
          content: "what is this?",
          images: [{ mediaType: "image/gif" as const, data: data.toBase64(), sha256 }],
        }];
        for await (const _ of provider.stream({ model: "m", messages, tools: [] })) {
          // Drained.
        }
        return JSON.stringify(server.requests.at(-1)!.body);
      };
      const forged = await ask(SENT, claimed);
      ok(!forged.includes(SENT.toBase64()), "the mismatched bytes are not sent");
      ok(forged.includes(`image ${claimed.slice(0, 12)}`), forged);
      const honest = await ask(SENT, await sha256Hex(SENT));
      ok(honest.includes(SENT.toBase64()), "a matching image still goes out");
      equal(server.requests.length, 2);
    });
  } finally {
    await cleanup();
  }
});
