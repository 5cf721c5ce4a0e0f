/**
 * A hostile language server (a program the project's files steer) that sends more than any
 * answer needs: a message announced as gigabytes, a header that never ends or that the reader
 * would read apart from the bound (a byte past ASCII), requests without
 * end whose answers it never reads. Each is refused at its bound, the server stopped, and the
 * check says why, with tern's memory kept small.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL as toFileUrl } from "node:url";
import { LanguageServer } from "../../src/harness/diagnostics/language_server.ts";
import { isAlive } from "../harness/_processes.ts";

/** Answers `initialize`; at the first didOpen it sends what `mode` says, without end. */
const SERVER = `
const mode = Deno.args[0];
const enc = new TextEncoder();
const send = (obj) => {
  const body = enc.encode(JSON.stringify(obj));
  Deno.stdout.writeSync(enc.encode("Content-Length: " + body.length + "\\r\\n\\r\\n"));
  Deno.stdout.writeSync(body);
};
let text = "";
for await (const chunk of Deno.stdin.readable) {
  text += new TextDecoder().decode(chunk);
  if (text.includes('"initialize"') && !text.includes("answered")) {
    text += "answered";
    send({ jsonrpc: "2.0", id: 0, result: { capabilities: {} } });
  }
  if (text.includes("didOpen") && mode === "requests") {
    // Asks and asks, and reads none of the answers.
    for (let id = 1; ; id++) {
      send({ jsonrpc: "2.0", id, method: "workspace/configuration", params: { items: [{}] } });
    }
  }
  if (text.includes("didOpen")) {
    const head = {
      body: enc.encode("Content-Length: 4000000000\\r\\n\\r\\n"),
      header: enc.encode("Content-Length: 1"),
      // A second length whose first byte only a reader that drops the high bit sees as "C".
      ascii: Uint8Array.from([
        ...enc.encode("Content-Length: 1\\r\\n"),
        0xc3,
        ...enc.encode("ontent-Length: 4000000000\\r\\n\\r\\n"),
      ]),
    }[mode];
    Deno.stdout.writeSync(head);
    // After the ASCII trick, frames of one byte each as the bound reads them: the bytes a
    // reader that saw the second length would keep, without end.
    const filler = mode === "ascii"
      ? enc.encode("xContent-Length: 1\\r\\n\\r\\n".repeat(40_000))
      : new Uint8Array(1 << 20).fill(32);
    while (true) Deno.stdout.writeSync(filler);
  }
}
`;

async function hostileServer(mode: "body" | "header" | "ascii" | "requests"): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tern_lsp_hostile_" });
  try {
    const script = join(dir, "server.js");
    await Deno.writeTextFile(script, SERVER);
    const server = await LanguageServer.start(
      { name: "hostile", argv: [], languageId: () => "typescript" },
      {
        program: Deno.execPath(),
        args: ["run", "-q", "--no-prompt", "--no-config", script, mode],
        env: { PATH: "/usr/bin:/bin", HOME: dir, NO_COLOR: "1", DENO_DIR: join(dir, "deno") },
        cwd: dir,
        confined: false,
      },
      { workspace: dir, timeoutMs: 60_000, readFile: () => undefined },
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const outcome = await Promise.race([
        server.diagnose(join(dir, "a.ts"), "export {};\n").then(
          () => "answered",
          (error) => `refused: ${error.message}`,
        ),
        new Promise<string>((resolve) => timer = setTimeout(() => resolve("no end"), 20_000)),
      ]);
      const expected = {
        body:
          /^refused: it sent a message of 4000000000 bytes, more than the 16777216 a language server may send, so it was stopped$/,
        header: /^refused: it sent a message header longer than 4096 bytes, so it was stopped$/,
        ascii:
          /^refused: it sent a message header that is malformed or has no valid Content-Length, so it was stopped$/,
        requests: /^refused: it left 1000 messages of tern's unread, so it was stopped$/,
      }[mode];
      match(outcome, expected);
      equal(await server.ended, outcome.slice("refused: ".length));
      ok(!isAlive(server.pid), "the server outlived its refusal");
      ok(Deno.memoryUsage().rss < 1_000_000_000, "what the server sent was kept");
    } finally {
      clearTimeout(timer);
      await server.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("LanguageServer.diagnose() stops a server that announces a message of gigabytes", async () => {
  await hostileServer("body");
});

Deno.test("LanguageServer.diagnose() stops a server whose message header never ends", async () => {
  await hostileServer("header");
});

Deno.test("LanguageServer.diagnose() stops a server that floods requests and reads no answer", async () => {
  await hostileServer("requests");
});

Deno.test("LanguageServer.diagnose() stops a server whose header is not plain ASCII lines", async () => {
  await hostileServer("ascii");
});

/**
 * Answers `initialize`; at the first didOpen it publishes no finding for the file (its uri is
 * the first argument), then sends log messages of 1 MiB without end.
 */
const FLOODING_SERVER = `
const enc = new TextEncoder();
const send = (obj) => {
  const body = enc.encode(JSON.stringify(obj));
  Deno.stdout.writeSync(enc.encode("Content-Length: " + body.length + "\\r\\n\\r\\n"));
  Deno.stdout.writeSync(body);
};
let text = "";
for await (const chunk of Deno.stdin.readable) {
  text += new TextDecoder().decode(chunk);
  if (text.includes('"initialize"') && !text.includes("answered")) {
    text += "answered";
    send({ jsonrpc: "2.0", id: 0, result: { capabilities: {} } });
  }
  if (text.includes("didOpen")) {
    const params = { uri: Deno.args[0], diagnostics: [] };
    send({ jsonrpc: "2.0", method: "textDocument/publishDiagnostics", params });
    const log = { type: 4, message: "x".repeat(1 << 20) };
    while (true) send({ jsonrpc: "2.0", method: "window/logMessage", params: log });
  }
}
`;

Deno.test("LanguageServer stops a server that floods messages once it has answered", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tern_lsp_flood_" });
  try {
    const script = join(dir, "server.js");
    await Deno.writeTextFile(script, FLOODING_SERVER);
    const file = join(dir, "a.ts");
    const server = await LanguageServer.start(
      { name: "flooding", argv: [], languageId: () => "typescript" },
      {
        program: Deno.execPath(),
        args: ["run", "-q", "--no-prompt", "--no-config", script, toFileUrl(file).href],
        env: { PATH: "/usr/bin:/bin", HOME: dir, NO_COLOR: "1", DENO_DIR: join(dir, "deno") },
        cwd: dir,
        confined: false,
      },
      { workspace: dir, timeoutMs: 60_000, readFile: () => undefined },
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      // Its answer comes; the flood after it is what stops it.
      equal((await server.diagnose(file, "export {};\n")).length, 0);
      const ended = await Promise.race([
        server.ended,
        new Promise<string>((resolve) => timer = setTimeout(() => resolve("no end"), 60_000)),
      ]);
      match(ended, /^it sent more than 33554432 bytes within 10 s, so it was stopped$/);
      ok(!isAlive(server.pid), "the server outlived its refusal");
    } finally {
      clearTimeout(timer);
      await server.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
