/**
 * ParserProcess and the parse deadline: tree-sitter on crafted source that runs away in time or
 * memory, parsed in the real parser process, which is killed or replaced while tern's own
 * process stays small.
 */
import { equal, match, ok } from "node:assert/strict";
import { ParserProcess } from "../../src/harness/code_index_parser.ts";
import { chunkFile, parseDeadlineMs } from "../../src/index/chunker.ts";
import { anyAlive, comesTrue, descendants } from "./_processes.ts";

/** 24 KB of Java that takes tree-sitter 9 s and 1.8 GB to parse (40 KB: 2.2 GB, then it aborts). */
const RUNAWAY_JAVA = "a<".repeat(20_000);
const GOOD_TS =
  "/** Weighs cargo. */\nexport function weighCargo(tons: number) {\n  return tons;\n}\n";

/** This process's resident memory, in MiB. */
function residentMib(): number {
  return Deno.memoryUsage().rss / 1024 / 1024;
}

/** The pids of this process's children whose command line holds `part` (by `ps`). */
function childrenRunning(part: string): number[] {
  const { stdout } = new Deno.Command("ps", { args: ["-o", "pid=,args=", "--ppid", `${Deno.pid}`] })
    .outputSync();
  return new TextDecoder().decode(stdout).split("\n")
    .filter((line) => line.includes(part))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

Deno.test("ParserProcess windows source whose parse outgrows tree-sitter's memory, and parses the next file", async () => {
  const parser = new ParserProcess();
  try {
    const before = residentMib();
    const started = performance.now();
    const runaway = await parser.chunk("src/A.java", RUNAWAY_JAVA);
    const took = performance.now() - started;
    equal(runaway.language, "text");
    equal(runaway.chunks[0].kind, "WINDOW");
    match(runaway.unparsed ?? "", /needed more than tree-sitter's 256 MiB|took longer than/);
    ok(took < parseDeadlineMs(RUNAWAY_JAVA.length) + 5_000, `${took} ms`);
    // The gigabytes were the parser process's: this one barely grew.
    ok(residentMib() - before < 100, `${before} → ${residentMib()} MiB`);
    const good = await parser.chunk("src/cargo.ts", GOOD_TS);
    equal(good.language, "typescript");
    ok(good.chunks.some((chunk) => chunk.kind === "FUNCTION" && chunk.symbol === "weighCargo"));
    equal(good.unparsed, undefined);
  } finally {
    await parser.close();
  }
});

Deno.test("ParserProcess kills a parser that stops answering, windows that file, and starts another", async () => {
  const parser = new ParserProcess();
  try {
    equal((await parser.chunk("a.ts", GOOD_TS)).language, "typescript");
    const [stuck] = childrenRunning("code_index_parser_main");
    ok(stuck !== undefined, "no parser process runs");
    // Frozen, it answers nothing: as a parse that never checks its deadline.
    Deno.kill(stuck, "SIGSTOP");
    const started = performance.now();
    const frozen = await parser.chunk("b.ts", GOOD_TS);
    const took = performance.now() - started;
    equal(frozen.language, "text");
    match(frozen.unparsed ?? "", /^its parse took longer than \d+\.\d s$/);
    ok(took < parseDeadlineMs(GOOD_TS.length) + 4_000, `${took} ms`);
    ok(!childrenRunning("code_index_parser_main").includes(stuck), "the frozen process lives on");
    const next = await parser.chunk("c.ts", GOOD_TS);
    equal(next.language, "typescript");
  } finally {
    await parser.close();
  }
  equal(childrenRunning("code_index_parser_main").length, 0);
});

Deno.test("chunkFile() stops a parse at its deadline and cuts the file into windows", async () => {
  // C++ `a<` makes tree-sitter keep thousands of stack versions; it checks the deadline often.
  // A short deadline of its own: under the default one a fast machine parses on until the
  // stack versions pass tree-sitter's memory cap, which aborts the runtime (the parser process
  // takes that case: see "a parse past tree-sitter's memory" above).
  const text = "a<".repeat(20_000);
  const limit = 200;
  const started = performance.now();
  const chunked = await chunkFile("evil.cpp", text, undefined, limit);
  const took = performance.now() - started;
  equal(chunked.language, "text");
  equal(chunked.unparsed, `its parse took longer than ${(limit / 1000).toFixed(1)} s`);
  ok(took < limit + 1_000, `${took} ms`);
  // The parser starts the next file afresh, not from where this one stopped.
  const next = await chunkFile("ok.cpp", "int weigh(int tons) { return tons; }\n");
  ok(next.chunks.some((chunk) => chunk.symbol === "weigh"), JSON.stringify(next.chunks));
});

Deno.test("A parser process ends with tern when tern is killed by SIGKILL, even one that cannot read its stdin's end", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tern-parser-kill-" });
  let parsers: number[] = [];
  try {
    // A stand-in for tern: it has a file parsed, then waits with its parser process idle.
    const driver = `${dir}/driver.ts`;
    const module = new URL("../../src/harness/code_index_parser.ts", import.meta.url).href;
    Deno.writeTextFileSync(
      driver,
      `import { ParserProcess } from ${JSON.stringify(module)};\n` +
        `await new ParserProcess().chunk("src/a.ts", ${JSON.stringify(GOOD_TS)});\n` +
        `console.log("parsed");\n` +
        `setInterval(() => {}, 1000);\n`,
    );
    const tern = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", driver],
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const reader = tern.stdout.getReader();
    await reader.read();
    parsers = descendants(tern.pid).filter((pid) =>
      commandLine(pid).includes("code_index_parser_main")
    );
    equal(parsers.length, 1, "the parser process runs");
    // Stopped, it would never see its stdin end (as one busy in a long parse does not).
    Deno.kill(parsers[0], "SIGSTOP");
    tern.kill("SIGKILL");
    await tern.status;
    reader.releaseLock();
    await tern.stdout.cancel();
    ok(await comesTrue(() => !anyAlive(parsers), 10_000), `parser ${parsers} outlived tern`);
  } finally {
    for (const pid of parsers) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // Gone, as it should be.
      }
    }
    await Deno.remove(dir, { recursive: true });
  }
});

/** The command line of `pid` (empty once it is gone). */
function commandLine(pid: number): string {
  const { stdout } = new Deno.Command("ps", { args: ["-o", "args=", "-p", `${pid}`] }).outputSync();
  return new TextDecoder().decode(stdout).trim();
}

Deno.test("ParserProcess starts tern's own Deno even when it lies in a folder commands may write", async () => {
  // A driver, so that the guard it sets stays in its own process: tern run from a checkout in
  // /var/tmp, say, whose sandbox may write there. tern's own runtime is started as it is, like
  // its other processes; only programs looked up on the host are refused there.
  const dir = await Deno.makeTempDir({ prefix: "tern-parser-guard-" });
  try {
    const driver = `${dir}/driver.ts`;
    const src = (path: string) => new URL(`../../src/${path}`, import.meta.url).href;
    Deno.writeTextFileSync(
      driver,
      `import { guardHostPrograms } from ${JSON.stringify(src("core/host_programs.ts"))};\n` +
        `import { ParserProcess } from ${JSON.stringify(src("harness/code_index_parser.ts"))};\n` +
        `guardHostPrograms([${JSON.stringify(Deno.execPath().replace(/\/[^/]+$/, ""))}]);\n` +
        `const parser = new ParserProcess();\n` +
        `const chunked = await parser.chunk("src/a.ts", ${JSON.stringify(GOOD_TS)});\n` +
        `await parser.close();\n` +
        `console.log(chunked.language);\n`,
    );
    const out = await new Deno.Command(Deno.execPath(), { args: ["run", "-A", "--quiet", driver] })
      .output();
    const stderr = new TextDecoder().decode(out.stderr);
    equal(out.code, 0, stderr);
    equal(new TextDecoder().decode(out.stdout).trim(), "typescript");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
