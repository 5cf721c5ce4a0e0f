/**
 * The request process as tern runs it (`processTransport`): how many run at once, how much of
 * an answer is read, and how much memory one may take. The real request process refuses
 * 127.0.0.1, so a stand-in takes its place behind the same argv: `denoPath` is a script that
 * records what it needs and runs the real Deno with the real flags on a script of the test's.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import {
  MAX_ANSWER_BYTES,
  MAX_PARALLEL_REQUESTS,
  processTransport,
  REQUEST_MEMORY_MB,
  webRequestArgv,
} from "../../src/tools/web_transport.ts";

/** Runs `fn` with a temp folder and `denoPath` written there as an executable `script`. */
async function withStandIn(
  script: (dir: string) => string,
  fn: (denoPath: string, dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tern_transport_" });
  try {
    const path = join(dir, "deno");
    await Deno.writeTextFile(path, script(dir));
    await Deno.chmod(path, 0o755);
    await fn(path, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const failure = (promise: Promise<unknown>) =>
  promise.then(() => "", (error: Error) => error.message);

Deno.test("processTransport() runs at most MAX_PARALLEL_REQUESTS request processes at once; the others wait", async () => {
  // Each stand-in counts the stand-ins running beside it, then answers after a while.
  await withStandIn(
    (dir) =>
      "#!/bin/sh\n" +
      `mkdir "${dir}/run.$$"\n` +
      `ls "${dir}" | grep -c '^run\\.' >> "${dir}/counts"\n` +
      "sleep 0.5\n" +
      `rmdir "${dir}/run.$$"\n` +
      `echo '{"ok":false,"kind":"network","message":"answered"}'\n`,
    async (denoPath, dir) => {
      const transport = processTransport(denoPath);
      const messages = await Promise.all(
        Array.from({ length: 6 }, (_, i) => failure(transport({ url: `https://e.example/${i}` }))),
      );
      deepEqual(messages, Array(6).fill("answered"));
      const counts = (await Deno.readTextFile(join(dir, "counts"))).trim().split("\n").map(Number);
      equal(counts.length, 6);
      equal(Math.max(...counts), MAX_PARALLEL_REQUESTS, `${counts}`);
    },
  );
});

Deno.test("processTransport() stops a request process whose answer passes MAX_ANSWER_BYTES", async () => {
  await withStandIn(
    // Four times the cap, then it would stay until its deadline: it must be stopped.
    () => `#!/bin/sh\nyes | head -c ${4 * MAX_ANSWER_BYTES}\nexec sleep 600\n`,
    async (denoPath) => {
      const started = performance.now();
      const message = await failure(processTransport(denoPath)({ url: "https://e.example/big" }));
      equal(
        message,
        'Cannot fetch "https://e.example/big": the request process\'s answer passed ' +
          `${MAX_ANSWER_BYTES / 1024 / 1024} MiB and was stopped`,
      );
      ok(performance.now() - started < 20_000);
    },
  );
});

Deno.test("webRequestArgv(): a request process stops itself after its CPU time, with no tern left to stop it", async () => {
  // What a hostile page (400,000 nested <div>s) does to the extraction: work without end. When
  // tern is killed (SIGKILL) nobody stops the process: its CPU limit must.
  await withStandIn(
    () => "#!/bin/sh\nwhile :; do :; done\n",
    async (denoPath) => {
      const [command, ...args] = webRequestArgv(denoPath, null, 1);
      const started = performance.now();
      const status = await new Deno.Command(command, { args, stdout: "null", stderr: "null" })
        .spawn().status;
      ok(status.signal === "SIGXCPU" || status.signal === "SIGKILL", JSON.stringify(status));
      ok(performance.now() - started < 30_000);
    },
  );
});

Deno.test("processTransport() holds a PDF decompression bomb to the request process's memory cap", async () => {
  // A 2 MB PDF whose one stream inflates to 2 GiB of spaces: pdf.js keeps what it inflates in
  // ArrayBuffers, beyond the JavaScript heap's cap (3 GB were reached before the memory cap).
  // The stand-in is a script of the request process's own argv that reads such a PDF.
  const pdf = new URL("../../src/tools/web_pdf.ts", import.meta.url).href;
  const support = new URL("../support/pdf.ts", import.meta.url).href;
  await withStandIn(
    // The stand-in's high-water mark of resident memory is written down while it runs.
    (dir) =>
      "#!/bin/bash\n" +
      "pid=$$\n" +
      `( while [ -e /proc/$pid ]; do grep VmHWM /proc/$pid/status >> "${dir}/peaks"; ` +
      "sleep 0.02; done ) </dev/null >/dev/null 2>&1 &\n" +
      `exec ${JSON.stringify(Deno.execPath())} "\${@:1:$#-1}" "${dir}/bomb.ts"\n`,
    async (denoPath, dir) => {
      await Deno.writeTextFile(
        join(dir, "bomb.ts"),
        `import { pdfToText } from ${JSON.stringify(pdf)};\n` +
          `import { bombPdf } from ${JSON.stringify(support)};\n` +
          "await new Response(Deno.stdin.readable).text();\n" +
          "const { pages } = await pdfToText(bombPdf(2048));\n" +
          'console.log(JSON.stringify({ ok: false, kind: "network", message: `read ${pages}` }));\n',
      );
      const message = await failure(
        processTransport(denoPath)({ url: "https://e.example/bomb.pdf", timeoutMs: 60_000 }),
      );
      const peaks = (await Deno.readTextFile(join(dir, "peaks"))).match(/\d+/g)!.map(Number);
      const peakMb = Math.max(...peaks) / 1024;
      match(
        message,
        new RegExp(
          '^Cannot fetch "https://e\\.example/bomb\\.pdf": reading the answer took more than the ' +
            `request process's ${REQUEST_MEMORY_MB} MiB of memory`,
        ),
      );
      // It grew (pdf.js inflated hundreds of MiB) and stopped at the cap.
      ok(peakMb > 200 && peakMb <= REQUEST_MEMORY_MB, `${Math.round(peakMb)} MiB`);
    },
  );
});
