import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { join } from "node:path";
import { createGrepTool } from "../../src/tools/grep.ts";
import { expandBraces } from "../../src/tools/grep_results.ts";
import { call, failed, succeeded, withSandbox, writeFiles } from "./_helpers.ts";

/** Where ripgrep is missing, its engine's tests run on the fallback (and say so). */
const HAS_RIPGREP = await Deno.stat("/usr/bin/rg").then((info) => info.isFile, () => false);

const ENGINES = [
  {
    name: "ripgrep",
    tool: createGrepTool({ ripgrep: "/usr/bin/rg" }),
    engine: HAS_RIPGREP ? "ripgrep" : "javascript",
  },
  { name: "fallback", tool: createGrepTool({ ripgrep: false }), engine: "javascript" },
] as const;

const TREE = {
  ".gitignore": "dist/\n*.log\n!keep.log\n",
  ".git/info": "needle in git\n",
  ".hidden/h.ts": "const needle = 'hidden';\n",
  "B.md": "Needle upper\n",
  "a.ts": "one\nneedle here\nthree\nfour\nfive\nsix\nneedle again\neight\n",
  "debug.log": "needle in a log\n",
  "keep.log": "needle kept\n",
  "dist/bundle.js": "needle bundled\n",
  "src/x.ts": "function needle() {}\r\n",
  "src/y.tsx": "<needle />\n",
  "src/gen/.gitignore": "*.gen.ts\n",
  "src/gen/z.gen.ts": "needle generated\n",
  "src/gen/ok.ts": "needle fine\n",
};

async function prepare(ws: string): Promise<void> {
  await writeFiles(ws, TREE);
  await Deno.writeFile(join(ws, "bin.dat"), new TextEncoder().encode("needle\0binary\n"));
}

for (const { name, tool, engine } of ENGINES) {
  Deno.test(`grep() [${name}] prints path:line:text sorted by path, skipping ignored and binary files`, async () => {
    await withSandbox(async ({ ws }) => {
      await prepare(ws);
      const obs = await call(tool, ws, { pattern: "needle" });
      equal(
        succeeded(obs),
        [
          ".hidden/h.ts:1:const needle = 'hidden';",
          "a.ts:2:needle here",
          "a.ts:7:needle again",
          "keep.log:1:needle kept",
          "src/gen/ok.ts:1:needle fine",
          "src/x.ts:1:function needle() {}",
          "src/y.tsx:1:<needle />",
        ].join("\n"),
      );
      ok(obs.status === "SUCCEEDED");
      deepEqual(obs.details, { kind: "matches", count: 7, truncated: false, engine });
    });
  });

  Deno.test(`grep() [${name}] matches case-insensitively and filters by glob`, async () => {
    await withSandbox(async ({ ws }) => {
      await prepare(ws);
      const md = succeeded(await call(tool, ws, { pattern: "NEEDLE u", ignore_case: true }));
      equal(md, "B.md:1:Needle upper");
      const tsx = succeeded(await call(tool, ws, { pattern: "needle", glob: "*.{tsx,md}" }));
      equal(tsx, "src/y.tsx:1:<needle />");
      const src = succeeded(await call(tool, ws, { pattern: "needle", glob: "src/**/*.ts" }));
      equal(src, "src/gen/ok.ts:1:needle fine\nsrc/x.ts:1:function needle() {}");
      const notTs = succeeded(await call(tool, ws, { pattern: "needle", glob: "!*.ts" }));
      equal(notTs, "keep.log:1:needle kept\nsrc/y.tsx:1:<needle />");
    });
  });

  Deno.test(`grep() [${name}] shows context lines and separates groups`, async () => {
    await withSandbox(async ({ ws }) => {
      await prepare(ws);
      const out = succeeded(await call(tool, ws, { pattern: "needle", path: "a.ts", context: 1 }));
      equal(
        out,
        [
          "a.ts-1-one",
          "a.ts:2:needle here",
          "a.ts-3-three",
          "--",
          "a.ts-6-six",
          "a.ts:7:needle again",
          "a.ts-8-eight",
        ].join("\n"),
      );
    });
  });

  Deno.test(`grep() [${name}] stops at max_results with a note`, async () => {
    await withSandbox(async ({ ws }) => {
      await prepare(ws);
      const obs = await call(tool, ws, { pattern: "needle", max_results: 2 });
      const out = succeeded(obs);
      ok(out.startsWith(".hidden/h.ts:1:const needle = 'hidden';\na.ts:2:needle here\n\n"), out);
      ok(out.endsWith("raise max_results)"), out);
      ok(obs.status === "SUCCEEDED");
      deepEqual(obs.details, { kind: "matches", count: 2, truncated: true, engine });
      const exact = succeeded(
        await call(tool, ws, { pattern: "needle", path: "a.ts", max_results: 2 }),
      );
      equal(exact, "a.ts:2:needle here\na.ts:7:needle again");
    });
  });

  Deno.test(`grep() [${name}] searches an ignored folder asked for by name`, async () => {
    await withSandbox(async ({ ws }) => {
      await prepare(ws);
      equal(
        succeeded(await call(tool, ws, { pattern: "needle", path: "dist" })),
        "dist/bundle.js:1:needle bundled",
      );
    });
  });

  Deno.test(`grep() [${name}] reports no matches, binary files and missing paths`, async () => {
    await withSandbox(async ({ ws }) => {
      await prepare(ws);
      equal(
        succeeded(await call(tool, ws, { pattern: "absent" })),
        'No matches for "absent" in "."',
      );
      equal(
        succeeded(await call(tool, ws, { pattern: "needle", path: "bin.dat" })),
        'No matches: "bin.dat" is a binary file',
      );
      failed(await call(tool, ws, { pattern: "x", path: "nope" }), "NOT_FOUND");
    });
  });

  Deno.test(`grep() [${name}] rejects an invalid regex`, async () => {
    await withSandbox(async ({ ws }) => {
      await prepare(ws);
      const message = failed(await call(tool, ws, { pattern: "a(" }), "INVALID_ARGUMENTS");
      ok(message.startsWith('Invalid regex "a("'), message);
    });
  });

  Deno.test(`grep() [${name}] refuses paths outside the workspace and skips symlinks`, async () => {
    await withSandbox(async ({ ws, outside }) => {
      await Deno.symlink(outside, join(ws, "out"));
      await Deno.symlink(join(outside, "secret.txt"), join(ws, "secret.txt"));
      failed(await call(tool, ws, { pattern: "secret", path: ".." }), "POLICY_DENIED");
      failed(await call(tool, ws, { pattern: "secret", path: "out" }), "POLICY_DENIED");
      failed(await call(tool, ws, { pattern: "secret", path: "secret.txt" }), "POLICY_DENIED");
      equal(
        succeeded(await call(tool, ws, { pattern: "secret" })),
        'No matches for "secret" in "."',
      );
    });
  });
}

Deno.test("grep() gives the same output with ripgrep and the fallback", async () => {
  await withSandbox(async ({ ws }) => {
    await prepare(ws);
    const queries = [
      { pattern: "e" },
      { pattern: "^n", context: 2 },
      { pattern: "e", context: 3, max_results: 3 },
      { pattern: "needle|one", path: "src", ignore_case: true },
      { pattern: "\\bneedle\\b", glob: "**/*.ts" },
      { pattern: "(?i)NEEDLE KEPT" },
    ];
    // The same but for the engine each names.
    const shown = (obs: Awaited<ReturnType<typeof call>>) =>
      obs.status === "SUCCEEDED" && obs.details?.kind === "matches"
        ? { ...obs, details: { ...obs.details, engine: undefined } }
        : obs;
    for (const query of queries) {
      const [rg, js] = await Promise.all(ENGINES.map(({ tool }) => call(tool, ws, query)));
      deepEqual(shown(rg), shown(js), JSON.stringify(query));
    }
  });
});

Deno.test("createGrepTool() falls back to JavaScript when ripgrep cannot be started", async () => {
  await withSandbox(async ({ ws }) => {
    await prepare(ws);
    const tool = createGrepTool({ ripgrep: join(ws, "no-such-rg") });
    const obs = await call(tool, ws, { pattern: "needle kept" });
    equal(succeeded(obs), "keep.log:1:needle kept");
    equal(
      obs.status === "SUCCEEDED" && obs.details?.kind === "matches" && obs.details.engine,
      "javascript",
    );
  });
});

Deno.test("grep() rejects wrong-typed and extra fields", async () => {
  await withSandbox(async ({ ws }) => {
    const tool = ENGINES[0].tool;
    failed(await call(tool, ws, { pattern: 1 }), "INVALID_ARGUMENTS");
    failed(await call(tool, ws, { pattern: "a", context: -1 }), "INVALID_ARGUMENTS");
    failed(await call(tool, ws, { pattern: "a", regex: true }), "INVALID_ARGUMENTS");
  });
});

Deno.test("expandBraces() expands alternatives, nested ones too", () => {
  deepEqual(expandBraces("*.{ts,tsx}"), ["*.ts", "*.tsx"]);
  deepEqual(expandBraces("{a,b{c,d}}/x"), ["a/x", "bc/x", "bd/x"]);
  deepEqual(expandBraces("plain/*.ts"), ["plain/*.ts"]);
  deepEqual(expandBraces("{single}"), ["{single}"]);
});

Deno.test("expandBraces() refuses a glob that expands to more than 256 patterns", () => {
  equal(expandBraces("{a,b}".repeat(8)).length, 256);
  throws(() => expandBraces("{a,b}".repeat(30)), /more than 256 patterns/);
});

Deno.test("createGrepTool() takes ripgrep's syntax in both engines ((?i) inline flags)", async () => {
  await withSandbox(async ({ ws }) => {
    await prepare(ws);
    for (const { tool } of ENGINES) {
      const found = succeeded(await call(tool, ws, { pattern: "(?i)NEEDLE KEPT" }));
      equal(found, "keep.log:1:needle kept");
    }
  });
});

Deno.test("grep() [fallback] runs a catastrophic pattern in linear time", async () => {
  await withSandbox(async ({ ws }) => {
    // (a+)+$ backtracks 2^n times on n a's and a b in a backtracking engine: never ends here.
    await Deno.writeTextFile(join(ws, "victim.txt"), `${"a".repeat(50_000)}b\n${"a".repeat(60)}\n`);
    const js = createGrepTool({ ripgrep: false });
    equal(succeeded(await call(js, ws, { pattern: "(a+)+$" })), `victim.txt:2:${"a".repeat(60)}`);
  });
});

Deno.test("grep() [ripgrep] leaves out a line too long to read whole, naming its file, and shows the rest", async () => {
  await withSandbox(async ({ ws }) => {
    // One minified line of 3 MiB: rg's JSON holds it whole (--max-columns does not apply).
    const long = "needle" + "x".repeat(3 * 1024 * 1024) + "\nneedle short\n";
    await writeFiles(ws, { "a.ts": "needle here\n", "min.js": long, "z.ts": "needle end\n" });
    const { tool } = ENGINES[0];
    const out = succeeded(await call(tool, ws, { pattern: "needle" }));
    equal(
      out,
      'a.ts:1:needle here\nmin.js:2:needle short\nz.ts:1:needle end\n\n(lines over 1 MiB long are left out, in "min.js")',
    );
    const only = succeeded(await call(tool, ws, { pattern: "xxxneedle|needlex", path: "min.js" }));
    equal(
      only,
      'No matches for "xxxneedle|needlex" in "min.js"\n\n(lines over 1 MiB long are left out, in "min.js")',
    );
  });
});

Deno.test("grep() never waits on a FIFO named like an ignore file: ripgrep gives way to JavaScript", async () => {
  for (
    const tool of [createGrepTool({ ripgrep: "/usr/bin/rg" }), createGrepTool({ ripgrep: false })]
  ) {
    await withSandbox(async ({ ws }) => {
      await writeFiles(ws, { "a.ts": "needle one\n", "sub/b.ts": "needle two\n" });
      for (const fifo of ["sub/.gitignore", ".rgignore"]) {
        const made = await new Deno.Command("mkfifo", { args: [join(ws, fifo)] }).output();
        equal(made.code, 0);
      }
      const obs = await call(tool, ws, { pattern: "needle" });
      equal(succeeded(obs), "a.ts:1:needle one\nsub/b.ts:1:needle two");
      ok(obs.status === "SUCCEEDED");
      equal((obs.details as { engine: string }).engine, "javascript");
    });
  }
});
