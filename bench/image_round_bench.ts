/**
 * One reply of many `read` calls of a large image, through a real `tern run` (bin/tern: the
 * bundle, the worker in bubblewrap) against the scripted model: the run's wall time and its
 * largest process (GNU time's maximum resident set, the largest of tern's processes). What a
 * model that reads one image over and over costs: the images a request would leave out are let
 * go as they arrive, and each read's 4.8 MB JSON line is split once.
 * Run: deno run -A --config deno.json bench/image_round_bench.ts [--reads 128] [--runs 3]
 *   [--root <checkout>] (another checkout's bin/tern, for an A/B; this one's by default)
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { ScriptedReply } from "../src/llm/scripted.ts";
import { startScriptedServer } from "../tests/support/scripted_server.ts";
import { scriptedRunArgs } from "../tests/support/tern_process.ts";
import { stats } from "./_stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    reads: { type: "string", default: "128" },
    runs: { type: "string", default: "3" },
    root: { type: "string", default: join(import.meta.dirname!, "..") },
  },
});
const READS = Number(values.reads);
const RUNS = Number(values.runs);

/** A whole PNG of about `size` bytes: one pixel, then an ancillary chunk of filler. */
function bigPng(size: number): Uint8Array {
  const pixel = Uint8Array.from(
    atob(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
    ),
    (c) => c.charCodeAt(0),
  );
  const head = pixel.subarray(0, pixel.length - 12);
  const end = pixel.subarray(pixel.length - 12);
  const chunk = new Uint8Array(size - pixel.length).fill(0x5a);
  new DataView(chunk.buffer).setUint32(0, chunk.length - 12);
  chunk.set([0x7a, 0x66, 0x69, 0x6c], 4);
  const png = new Uint8Array(head.length + chunk.length + end.length);
  png.set(head);
  png.set(chunk, head.length);
  png.set(end, head.length + chunk.length);
  return png;
}

const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "image-round-" }));
const ws = join(root, "ws");
await Deno.mkdir(ws);
await Deno.writeFile(join(ws, "big.png"), bigPng(3_600_000));
const server = await startScriptedServer(
  ((_request: unknown, i: number) =>
    i % 2 === 0
      ? {
        toolCalls: Array.from({ length: READS }, (_, k) => ({
          id: `c${k}`,
          name: "read",
          arguments: '{"path":"big.png"}',
        })),
      }
      : { text: "done" }) as unknown as ScriptedReply[],
  { chunkDelayMs: 0 },
);
const walls: number[] = [];
const rss: number[] = [];
try {
  for (let run = 0; run < RUNS; run++) {
    const home = join(root, `home${run}`);
    await Deno.mkdir(home);
    const started = performance.now();
    const out = await new Deno.Command("/usr/bin/time", {
      args: [
        "-f",
        "maxrss_kb=%M",
        join(values.root, "bin", "tern"),
        ...scriptedRunArgs(server.baseUrl, "go", false),
      ],
      cwd: ws,
      env: { HOME: home, TERN_HOME: home },
      stdout: "null",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(out.stderr);
    const kb = Number(err.match(/maxrss_kb=(\d+)/)?.[1]);
    if (!out.success || !Number.isFinite(kb)) throw new Error(`tern run failed:\n${err}`);
    walls.push(performance.now() - started);
    rss.push(kb / 1024);
  }
} finally {
  await server.close();
  await Deno.remove(root, { recursive: true });
}
console.log(
  JSON.stringify({ reads: READS, runs: RUNS, wallMs: stats(walls), maxRssMb: stats(rss) }),
);
