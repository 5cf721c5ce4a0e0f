/**
 * End-to-end: `tern run --image` through the real process against the scripted server for all
 * three API styles: the image goes out in each API's shape, the session stores it once by
 * content hash in the session folder (the entry holds only the hash), a resumed session sends
 * it again, and paths outside the workspace, non-images and models without images are refused.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { withScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

/** A 1×1 PNG. */
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);
const PNG_BASE64 = btoa(String.fromCharCode(...PNG));

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

const APIS = [
  {
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    image: (body: Record<string, unknown>) => {
      const last = (body.messages as { content: Record<string, unknown>[] }[]).at(-1)!;
      return last.content.find((b) => b.type === "image") as {
        source: { type: string; media_type: string; data: string };
      };
    },
    check: (image: { source: { type: string; media_type: string; data: string } }) => {
      equal(image.source.type, "base64");
      equal(image.source.media_type, "image/png");
      equal(image.source.data, PNG_BASE64);
    },
  },
  {
    provider: "openai",
    model: "gpt-4.1",
    image: (body: Record<string, unknown>) => {
      const user = (body.messages as { role: string; content: unknown }[])
        .filter((m) => m.role === "user").at(-1)!;
      return (user.content as Record<string, unknown>[]).find((p) => p.type === "image_url");
    },
    check: (part: { image_url: { url: string } }) =>
      equal(part.image_url.url, `data:image/png;base64,${PNG_BASE64}`),
  },
  {
    provider: "openai-responses",
    model: "gpt-4.1",
    image: (body: Record<string, unknown>) => {
      const user = (body.input as { role?: string; content: unknown }[])
        .filter((m) => m.role === "user").at(-1)!;
      return (user.content as Record<string, unknown>[]).find((p) => p.type === "input_image");
    },
    check: (part: { image_url: string }) =>
      equal(part.image_url, `data:image/png;base64,${PNG_BASE64}`),
  },
];

for (const api of APIS) {
  Deno.test(`tern run --image sends the image to ${api.provider}, stored once by hash`, async () => {
    const ws = await tempWorkspace();
    try {
      await Deno.writeFile(join(ws.dir, "shot.png"), PNG);
      await withScriptedServer([{ text: "a dot" }, { text: "still a dot" }], async (server) => {
        const env = {
          TERN_HOME: ws.home,
          HOME: ws.home,
          OPENAI_API_KEY: "k",
          ANTHROPIC_API_KEY: "k",
        };
        const start = ["--provider", api.provider, "--base-url", server.baseUrl];
        const run = await runTern(
          ["run", ...start, "--model", api.model, "--image", "shot.png", "-o", "json", "what?"],
          { cwd: ws.dir, env },
        );
        equal(run.code, 0, run.stderr);
        // deno-lint-ignore no-explicit-any
        api.check(api.image(server.requests[0].body) as any);

        // The session entry holds the hash; the bytes are in the folder's images/, once.
        const sessionPath = JSON.parse(run.stdout).sessionPath as string;
        const text = await Deno.readTextFile(sessionPath);
        ok(!text.includes(PNG_BASE64), "the image is not inline in the session");
        const hash = await sha256(PNG);
        ok(text.includes(hash), "the entry names the image by its hash");
        const stored = join(sessionPath, "..", "images", hash);
        equal((await Deno.readFile(stored)).length, PNG.length);

        // A resumed session sends the image again, read back from the folder.
        const again = await runTern(["run", "--base-url", server.baseUrl, "-c", "and now?"], {
          cwd: ws.dir,
          env,
        });
        equal(again.code, 0, again.stderr);
        // deno-lint-ignore no-explicit-any
        api.check(firstImage(server.requests[1].body, api) as any);
      }, { chunkDelayMs: 0 });
    } finally {
      await ws.cleanup();
    }
  });
}

/** The image of the first user message of a request (a resumed one has the task's later). */
function firstImage(body: Record<string, unknown>, api: (typeof APIS)[number]): unknown {
  if (api.provider === "anthropic") {
    const first = (body.messages as { content: Record<string, unknown>[] }[])[0];
    return first.content.find((b) => b.type === "image");
  }
  const list = (api.provider === "openai" ? body.messages : body.input) as {
    role?: string;
    content: unknown;
  }[];
  const user = list.find((m) => m.role === "user")!;
  return (user.content as Record<string, unknown>[]).find((p) =>
    p.type === "image_url" || p.type === "input_image"
  );
}

Deno.test("tern run --image refuses paths outside the workspace, non-images and text-only models", async () => {
  const ws = await tempWorkspace();
  const outside = await Deno.makeTempDir();
  try {
    await Deno.writeFile(join(outside, "secret.png"), PNG);
    await Deno.symlink(join(outside, "secret.png"), join(ws.dir, "link.png"));
    await Deno.writeTextFile(join(ws.dir, "fake.png"), "not an image");
    await Deno.writeFile(join(ws.dir, "shot.png"), PNG);
    await withScriptedServer([], async (server) => {
      const env = { TERN_HOME: ws.home, HOME: ws.home, ANTHROPIC_API_KEY: "k" };
      const tern = (model: string, image: string) =>
        runTern([
          "run",
          "--provider",
          "anthropic",
          "--base-url",
          server.baseUrl,
          "--model",
          model,
          "--image",
          image,
          "look",
        ], { cwd: ws.dir, env });
      const cases: [string, string, RegExp][] = [
        ["claude-sonnet-4-5", "link.png", /Cannot attach image "link\.png": .*outside/],
        ["claude-sonnet-4-5", join(outside, "secret.png"), /Cannot attach image .*outside/],
        ["claude-sonnet-4-5", "../x.png", /Cannot attach image "\.\.\/x\.png"/],
        ["claude-sonnet-4-5", "fake.png", /not a PNG, JPEG, GIF or WebP image/],
        ["some-text-model", "shot.png", /model "some-text-model" does not take images/],
      ];
      for (const [model, image, message] of cases) {
        const run = await tern(model, image);
        ok(run.code !== 0, `${image}: ${run.stdout}`);
        match(run.stderr, message);
      }
      equal(server.requests.length, 0, "nothing was sent");
    }, { chunkDelayMs: 0 });
  } finally {
    await ws.cleanup();
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("tern run --image refuses what the person's deny rules hide, through a link too, and hard links", async () => {
  const ws = await tempWorkspace();
  try {
    await Deno.mkdir(join(ws.dir, "secrets"));
    await Deno.mkdir(join(ws.dir, "docs"));
    await Deno.writeFile(join(ws.dir, "secrets/qr.png"), PNG);
    // The repository's link into the hidden folder, and a second name for the same file.
    await Deno.symlink("../secrets/qr.png", join(ws.dir, "docs/shot.png"));
    await Deno.link(join(ws.dir, "secrets/qr.png"), join(ws.dir, "docs/hard.png"));
    await Deno.writeFile(join(ws.dir, "ok.png"), PNG);
    await Deno.mkdir(join(ws.home, ".tern"), { recursive: true });
    await Deno.writeTextFile(
      join(ws.home, ".tern/config.jsonc"),
      JSON.stringify({ rules: [{ action: "deny", path: "secrets/**" }] }),
    );
    await withScriptedServer([{ text: "a dot" }], async (server) => {
      const env = { TERN_HOME: join(ws.home, ".tern"), HOME: ws.home, ANTHROPIC_API_KEY: "k" };
      const tern = (image: string) =>
        runTern([
          "run",
          "--provider",
          "anthropic",
          "--base-url",
          server.baseUrl,
          "--model",
          "claude-sonnet-4-5",
          "--image",
          image,
          "look",
        ], { cwd: ws.dir, env });
      const cases: [string, RegExp][] = [
        ["secrets/qr.png", /Cannot attach image "secrets\/qr\.png": your deny rules keep/],
        ["docs/shot.png", /Cannot attach image "docs\/shot\.png": your deny rules keep/],
        ["docs/hard.png", /Cannot attach image "docs\/hard\.png": .*more than one link/],
      ];
      for (const [image, message] of cases) {
        const run = await tern(image);
        ok(run.code !== 0, `${image}: ${run.stdout}`);
        match(run.stderr, message);
      }
      equal(server.requests.length, 0, "nothing was sent");
      // A plain image beside them still goes.
      const run = await tern("ok.png");
      equal(run.code, 0, run.stderr);
      equal(server.requests.length, 1);
    }, { chunkDelayMs: 0 });
  } finally {
    await ws.cleanup();
  }
});
