import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { createWebFetchTool } from "../../src/tools/web_fetch.ts";
import { pdfToText, requestWithPdf } from "../../src/tools/web_pdf.ts";
import {
  processTransport,
  REQUEST_HEAP_MB,
  webRequestArgv,
} from "../../src/tools/web_transport.ts";
import { minimalPdf } from "../support/pdf.ts";
import { call, failed, runAsRequestProcess, succeeded } from "./_helpers.ts";

/** web_fetch with the test injection (127.0.0.1 may be reached) and PDF reading in-process. */
const local = (pdfMaxPages?: number, maxBytes = 200_000) =>
  createWebFetchTool({
    transport: (request) =>
      requestWithPdf(request, { testAllowAddress: (address) => address === "127.0.0.1" }),
    maxBytes,
    pdfMaxPages,
  });

const MANUAL = minimalPdf(["Installation guide", "Chapter two: configuration"]);
const LONG = minimalPdf(Array.from({ length: 6 }, (_, i) => `Section number ${i + 1}`));
const CORRUPT = new TextEncoder().encode("%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pag");

async function withSite(fn: (base: string) => Promise<void>): Promise<void> {
  const pages: Record<string, [string, Uint8Array<ArrayBuffer>]> = {
    "/manual.pdf": ["application/pdf", MANUAL],
    "/download": ["application/octet-stream", MANUAL],
    "/long.pdf": ["application/pdf", LONG],
    "/broken.pdf": ["application/pdf", CORRUPT],
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const page = pages[new URL(req.url).pathname];
    if (!page) return new Response("not here", { status: 404 });
    return new Response(page[1], { headers: { "content-type": page[0] } });
  });
  try {
    await fn(`http://127.0.0.1:${server.addr.port}`);
  } finally {
    await server.shutdown();
  }
}

Deno.test("web_fetch() reads a PDF as text with a marker per page, by type or by its first bytes", async () => {
  await withSite(async (base) => {
    for (const path of ["/manual.pdf", "/download"]) {
      const out = succeeded(await call(local(), "/", { url: `${base}${path}` }));
      match(
        out,
        new RegExp(`Fetched: HTTP 200, application/pdf as text, 2 pages, ${MANUAL.length} bytes`),
      );
      match(
        out,
        /CONTENT \w+ ---\n--- Page 1 of 2 ---\nInstallation guide\n\n--- Page 2 of 2 ---\nChapter two: configuration\n--- END UNTRUSTED/,
      );
    }
  });
});

Deno.test("web_fetch() says clearly when a PDF cannot be parsed", async () => {
  await withSite(async (base) => {
    const message = failed(
      await call(local(), "/", { url: `${base}/broken.pdf` }),
      "EXECUTION_FAILED",
    );
    match(
      message,
      new RegExp(
        `^Cannot read the PDF "${base}/broken.pdf" \\(${CORRUPT.length} bytes\\): the parser said "\\S`,
      ),
    );
  });
});

Deno.test("web_fetch() reads a long PDF up to its page cap, and a PDF cut at the byte cap says so", async () => {
  await withSite(async (base) => {
    const out = succeeded(await call(local(2), "/", { url: `${base}/long.pdf` }));
    match(out, /application\/pdf as text, 2 of 6 pages/);
    match(
      out,
      /--- Page 2 of 6 ---\nSection number 2\n\n\[PDF text stopped after the first 2 of 6 pages\]/,
    );
    ok(!out.includes("Section number 3"));
    // The body cut halfway: pdf.js either recovers what it can or fails; either way it is said.
    const cut = await call(local(undefined, Math.floor(LONG.length / 2)), "/", {
      url: `${base}/long.pdf`,
    });
    const text = cut.status === "SUCCEEDED"
      ? cut.output
      : cut.status === "ERROR"
      ? cut.message
      : "";
    match(text, /cut at the size limit/);
    ok(!text.includes("Section number 6"));
  });
});

Deno.test("pdfToText() stops at its character cap within a page", async () => {
  const { text, pages, read, cut } = await pdfToText(LONG, { maxChars: 60 });
  equal(pages, 6);
  equal(text.length, 60);
  match(text, /^--- Page 1 of 6 ---\nSection number 1\n\n--- Page 2 of 6 ---\n/);
  equal(read, 2);
  equal(cut, "60 characters (within page 2 of 6)");
});

Deno.test("pdfToText() reads no further page once its deadline has passed", async () => {
  const controller = new AbortController();
  controller.abort();
  const { text, pages, read, cut } = await pdfToText(LONG, {}, controller.signal);
  deepEqual([text, pages, read], ["", 6, 0]);
  equal(cut, "the first 0 of 6 pages (the time limit was reached)");
});

Deno.test("the request process's flags load unpdf from tern's own config, with the network alone", async () => {
  // The request process never reaches 127.0.0.1, so its argv runs a script that reads a PDF
  // given on stdin with the same module: this proves unpdf resolves (cached, no download, no
  // project deno.json) and parses with no read, write, env or run permission.
  const dir = await Deno.makeTempDir({ prefix: "tern_pdf_" });
  try {
    const script = join(dir, "read_pdf.ts");
    const module = new URL("../../src/tools/web_pdf.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { pdfToText } from ${JSON.stringify(module)};\n` +
        "const bytes = new Uint8Array(await new Response(Deno.stdin.readable).arrayBuffer());\n" +
        "console.log(JSON.stringify(await pdfToText(bytes)));\n",
    );
    // A hostile project's deno.json and package.json in the working directory are not read.
    await Deno.writeTextFile(join(dir, "deno.json"), '{"imports":{"unpdf":"./evil.ts"}}');
    await Deno.writeTextFile(join(dir, "evil.ts"), 'throw new Error("project code ran");');
    await Deno.writeTextFile(
      join(dir, "package.json"),
      '{"dependencies":{"unpdf":"0.0.1"},"imports":{"#x":"./evil.ts"}}',
    );
    // Its heap is capped (a hostile PDF ends the process, not the machine's memory).
    ok(webRequestArgv().includes(`--v8-flags=--max-old-space-size=${REQUEST_HEAP_MB}`));
    const { code, stdout, stderr } = await runAsRequestProcess(script, MANUAL, dir);
    equal(code, 0, stderr);
    const answer = JSON.parse(stdout);
    equal(answer.pages, 2);
    match(answer.text, /Installation guide/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("processTransport() stops a request process that outlives its deadline", async () => {
  // A stand-in for a process stuck in a parse: it never answers.
  const dir = await Deno.makeTempDir({ prefix: "tern_pdf_" });
  try {
    const stuck = join(dir, "stuck.sh");
    await Deno.writeTextFile(stuck, "#!/bin/sh\nexec sleep 600\n");
    await Deno.chmod(stuck, 0o755);
    const transport = processTransport(stuck, 0);
    let message = "";
    await transport({ url: "https://example.com/a.pdf", timeoutMs: 200 }).catch((error) => {
      message = error.message;
    });
    equal(
      message,
      'Cannot fetch "https://example.com/a.pdf": the request process gave no answer within 200 ms ' +
        "and was stopped",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("only the request process loads unpdf: no other module of tern imports web_pdf.ts or unpdf", () => {
  const root = new URL("../../src/", import.meta.url).pathname;
  const users: string[] = [];
  for (const entry of Deno.readDirSync(`${root}tools`)) {
    const text = Deno.readTextFileSync(`${root}tools/${entry.name}`);
    // A value import (static or dynamic) of web_pdf.ts or of unpdf; `import type` loads nothing.
    if (
      /^import (?!type\s)[^;]*["']\.\/web_pdf\.ts["']|import\(["'](?:\.\/web_pdf\.ts|unpdf)["']\)/m
        .test(text)
    ) {
      users.push(entry.name);
    }
  }
  deepEqual(users.sort(), ["web_pdf.ts", "web_request_main.ts"]);
  for (const dir of ["agent", "harness", "core", "cli", "tui", "sandbox"]) {
    try {
      for (const entry of Deno.readDirSync(`${root}${dir}`)) {
        if (!entry.isFile) continue;
        ok(!/web_pdf|unpdf/.test(Deno.readTextFileSync(`${root}${dir}/${entry.name}`)), entry.name);
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
});
