/**
 * serveJsonLines(): a helper process of tern's own gives up its access before it reads its
 * first request (reading too, once loaded, when asked), answers each line with one line, and
 * sends a line too long as what stands in for it.
 */
import { deepEqual, equal } from "node:assert/strict";
import { JsonLineProcess } from "../../src/core/json_line_process.ts";

/** A helper serving through serveJsonLines: each line answered with what `body` returns. */
function helperSource(body: string, options: string): string {
  const module = new URL("../../src/core/json_line_serve.ts", import.meta.url).href;
  return `import { serveJsonLines } from ${JSON.stringify(module)};\n` +
    `await serveJsonLines(async (line) => { ${body} }, ${options});\n`;
}

async function withHelper(
  source: string,
  use: (helper: JsonLineProcess<unknown, Record<string, unknown>>) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tern-serve-" });
  try {
    Deno.writeTextFileSync(`${dir}/helper.ts`, source);
    const helper = await JsonLineProcess.start<unknown, Record<string, unknown>>(
      [Deno.execPath(), "run", "-A", "--quiet", `${dir}/helper.ts`],
      30_000,
    );
    try {
      await use(helper);
    } finally {
      await helper.end();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("serveJsonLines() answers with every access given up, reading too after its load", async () => {
  const body = `
    const names = ["read", "write", "net", "env", "run", "sys", "ffi"];
    const granted = names.filter((name) => Deno.permissions.querySync({ name }).state === "granted");
    const tried = [];
    for (const attempt of [
      () => Deno.readTextFileSync("/etc/hostname"),
      () => Deno.writeTextFileSync("/tmp/tern-serve-probe", "x"),
      () => Deno.env.get("HOME"),
      () => new Deno.Command("/bin/true").outputSync(),
    ]) {
      try { attempt(); tried.push("done"); } catch (error) { tried.push(error.name); }
    }
    return { granted, tried, last: true };`;
  await withHelper(
    helperSource(body, "{ load: async () => {}, readAfterLoad: false }"),
    async (helper) => {
      const answer = await helper.ask({}, 10_000);
      deepEqual(answer, {
        granted: [],
        tried: ["NotCapable", "NotCapable", "NotCapable", "NotCapable"],
        last: true,
      });
    },
  );
});

Deno.test("serveJsonLines() sends a line longer than tooLong.maxChars as its stand-in, whole", async () => {
  const body = `const n = JSON.parse(line).n; return { n, text: "é".repeat(n) };`;
  const options = "{ tooLong: { maxChars: 1_000_000, " +
    "instead: (answer, chars) => ({ n: answer.n, chars }) } }";
  await withHelper(helperSource(body, options), async (helper) => {
    // 700,000 characters of two bytes each: more than a pipe takes in one write.
    const long = await helper.ask({ n: 700_000 }, 10_000);
    equal(typeof long === "object" && (long.text as string).length, 700_000);
    deepEqual(await helper.ask({ n: 2_000_000 }, 10_000), { n: 2_000_000, chars: 2_000_023 });
    deepEqual(await helper.ask({ n: 1 }, 10_000), { n: 1, text: "é" });
  });
});
