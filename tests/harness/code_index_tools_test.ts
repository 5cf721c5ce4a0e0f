/**
 * code_search and code_symbols over a real workspace and a real SQLite index: built on first
 * use, refreshed incrementally after the agent's changes, confined to the workspace, safe with
 * hostile queries, and cut by their budgets with a note saying so.
 */
import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { FILES, IGNORED, outputOf, OUTSIDE, withIndexFixture } from "./_code_index_fixture.ts";
import { indexPath, indexWorkspace } from "../../src/harness/code_index.ts";
import { CodeIndexTools } from "../../src/harness/code_index_tools.ts";
import { createCodeSearchTool } from "../../src/tools/code_search.ts";
import { createCodeSymbolsTool } from "../../src/tools/code_symbols.ts";
import { IndexStore } from "../../src/index/store.ts";

Deno.test("code_search builds the index on first use and answers with path:lines, kind, symbol, score and lines", async () => {
  await withIndexFixture(async ({ search, index }) => {
    const output = outputOf(await search({ query: "compute area" }));
    match(output, /^\d+ result\(s\) for "compute area", best first:/);
    match(output, /^src\/shapes\.ts:24-26 {2}FUNCTION computeArea {2}score \d+\.\d\d$/m);
    match(output, /^ {2}\/\/ Multiplies width by height\.$/m);
    match(
      output,
      /^ {2}24│ export function computeArea\(width: number, height: number\): number \{$/m,
    );
    ok(index.lastRefresh.indexed >= 2, JSON.stringify(index.lastRefresh));
  });
});

Deno.test("code_search never reads through a symlink, a symlinked folder, or an ignored file", async () => {
  await withIndexFixture(async ({ search, symbols, index }) => {
    // The answer's first line repeats the query: the results are the lines after it.
    const results = async (query: string) =>
      outputOf(await search({ query })).split("\n").slice(1).join("\n");
    for (const query of [OUTSIDE, IGNORED, "stolen"]) {
      const output = await results(query);
      ok(!output.includes(OUTSIDE) && !output.includes(IGNORED), output);
    }
    // Paths the agent wrote are checked by the same rules: no way in through them either.
    index.markChanged(["linked_dir/stolen.ts", "src/link.ts", "secret.ts", "../x.ts"]);
    const output = outputOf(await symbols({ name: OUTSIDE }));
    match(output, /none in the index/);
    equal(await results(IGNORED), "");
    equal(await results(OUTSIDE), "");
  });
});

Deno.test("code_search takes FTS5 syntax in a query as plain words, never as an error", async () => {
  await withIndexFixture(async ({ search }) => {
    for (
      const query of [
        '"',
        'area" OR "x',
        "NEAR(compute area, 2)",
        "computeArea*",
        "-area",
        "symbol:computeArea",
        "^compute",
        "area AND OR NOT",
        ")(",
        "'; DROP TABLE chunks; --",
        "\u0000area",
        "***",
      ]
    ) {
      const observation = await search({ query });
      equal(observation.status, "SUCCEEDED", `${query}: ${JSON.stringify(observation)}`);
    }
    match(outputOf(await search({ query: "symbol:computeArea" })), /FUNCTION computeArea/);
  });
});

Deno.test("code_search re-reads only the files the agent wrote, and sees a command's adds and deletes", async () => {
  await withIndexFixture(async ({ dir, search, index }) => {
    outputOf(await search({ query: "area" }));
    // An edit tool rewrote one file: only it is read again.
    await Deno.writeTextFile(
      join(dir, "src", "report.ts"),
      "/** Sums the rent of every tenant. */\nexport function collectRentTotals() {}\n",
    );
    // The call named it by its absolute path: the same file.
    index.markChanged([join(dir, "src", "report.ts")]);
    const afterEdit = outputOf(await search({ query: "collect rent totals" }));
    match(afterEdit, /FUNCTION collectRentTotals/);
    deepEqual(index.lastRefresh, { checked: 1, read: 1, indexed: 1, removed: 0 });
    ok(
      !outputOf(await search({ query: "printFloorReport" })).includes("FUNCTION printFloorReport"),
    );
    // A command added one file and removed another: a walk, reading only what changed.
    await Deno.writeTextFile(join(dir, "src", "tax.ts"), "export function levyHarborTax() {}\n");
    await Deno.remove(join(dir, "src", "report.ts"));
    index.markChanged();
    match(outputOf(await search({ query: "levy harbor tax" })), /FUNCTION levyHarborTax/);
    equal(index.lastRefresh.read, 1, JSON.stringify(index.lastRefresh));
    equal(index.lastRefresh.indexed, 1);
    equal(index.lastRefresh.removed, 1);
    ok(!outputOf(await search({ query: "collectRentTotals" })).includes("src/report.ts"));
  }, { rewalkMs: 3_600_000 });
});

Deno.test("code_search with no change since the last search reads no file", async () => {
  await withIndexFixture(async ({ search, index }) => {
    outputOf(await search({ query: "area" }));
    outputOf(await search({ query: "square" }));
    deepEqual(index.lastRefresh, { checked: 0, read: 0, indexed: 0, removed: 0 });
  }, { rewalkMs: 3_600_000 });
});

Deno.test("code_search cut by its file budget says so, and later searches continue to a whole index", async () => {
  await withIndexFixture(async ({ search }) => {
    const first = outputOf(await search({ query: "printFloorReport" }));
    match(
      first,
      /^Note: the code index is incomplete: the refresh stopped after 1 files at the budget of 1 files read per search;/m,
    );
    let last = first;
    for (let i = 0; i < Object.keys(FILES).length + 2 && last.includes("incomplete"); i++) {
      last = outputOf(await search({ query: "printFloorReport" }));
    }
    ok(!last.includes("Note:"), last);
    match(last, /FUNCTION printFloorReport/);
  }, { maxFiles: 1 });
});

Deno.test("code_search cut by its time budget says so", async () => {
  await withIndexFixture(async ({ search }) => {
    match(
      outputOf(await search({ query: "area" })),
      /^Note: the code index is incomplete: the refresh stopped after 0 files at the 0 s time budget of one search;/m,
    );
  }, { budgetMs: 0 });
});

Deno.test("code_search keeps to max_chars and says how many results it left out", async () => {
  await withIndexFixture(async ({ search }) => {
    const output = outputOf(await search({ query: "area square polygon shape", max_chars: 500 }));
    ok(output.length <= 560, String(output.length));
    match(output, /\[\d+ more result\(s\) left out: the answer's length limit\]$/);
  });
});

Deno.test("code_search refuses when the profile does not let tools read the whole workspace", async () => {
  await withIndexFixture(async ({ dir, search }) => {
    const observation = await search(
      { query: "area" },
      { roots: { read: [join(dir, "src")], write: [] } },
    );
    equal(observation.status === "ERROR" && observation.code, "POLICY_DENIED");
    equal(
      (await search({ query: "area" }, { roots: { read: ["/"], write: [] } })).status,
      "SUCCEEDED",
    );
  });
});

Deno.test("code_symbols answers definitions, callers, callees, implementations and importers", async () => {
  await withIndexFixture(async ({ symbols }) => {
    const lines = async (args: Record<string, unknown>) =>
      outputOf(await symbols(args)).split("\n").slice(1).map((line) => line.split("  ")[0]);
    deepEqual(await lines({ name: "computeArea" }), ["src/shapes.ts:24-26"]);
    deepEqual(await lines({ name: "computeArea", find: "callers" }), [
      "src/report.ts:4-7",
      "src/shapes.ts:18-20",
    ]);
    deepEqual(await lines({ name: "Square.area", find: "callees" }), ["src/shapes.ts:24-26"]);
    deepEqual(await lines({ name: "Polygon", find: "implementations" }), ["src/shapes.ts:14-21"]);
    deepEqual(await lines({ name: "Shape", find: "implementations" }), ["src/shapes.ts:14-21"]);
    deepEqual(await lines({ name: "shapes", find: "importers" }), ["src/report.ts:1-7"]);
    match(outputOf(await symbols({ name: "computeArea", find: "callers" })), /CALLS computeArea/);
    match(outputOf(await symbols({ name: "noSuchThing*" })), /none in the index/);
  });
});

function never(): never {
  throw new Error("unreachable");
}

Deno.test("code_search cancelled during its refresh walks again at the next search", async () => {
  await withIndexFixture(async ({ dir, search, index }) => {
    outputOf(await search({ query: "area" }));
    await Deno.writeTextFile(join(dir, "src", "dock.ts"), "export function levyDockFee() {}\n");
    index.markChanged();
    const abort = new AbortController();
    abort.abort();
    await rejects(index.refresh(abort.signal));
    match(outputOf(await search({ query: "levy dock fee" })), /FUNCTION levyDockFee/);
    // Two searches at once share one refresh: the first one's cancel does not fail the second.
    await Deno.writeTextFile(join(dir, "src", "quay.ts"), "export function rentQuaySpace() {}\n");
    index.markChanged();
    const [cancelled, other] = await Promise.allSettled([
      index.refresh(abort.signal),
      search({ query: "rent quay space" }),
    ]);
    equal(cancelled.status, "rejected");
    match(outputOf(other.status === "fulfilled" ? other.value : never()), /FUNCTION rentQuaySpace/);
  }, { rewalkMs: 3_600_000 });
});

Deno.test("code_search rebuilds a corrupt index with a note, and fails clearly where none can be made", async () => {
  await withIndexFixture(async ({ file, search }) => {
    await Deno.mkdir(join(file, ".."), { recursive: true });
    await Deno.writeTextFile(file, "not a database ".repeat(100));
    const output = outputOf(await search({ query: "compute area" }));
    match(output, /^Note: Rebuilt the code index ".*ws\.sqlite": file is not a database$/m);
    match(output, /FUNCTION computeArea/);
    ok(!outputOf(await search({ query: "compute area" })).includes("Note:"));
  });
  await withIndexFixture(async ({ ternHome, search }) => {
    // The index folder's place is taken by a file: nothing can be created there.
    await Deno.writeTextFile(join(ternHome, "index"), "");
    const observation = await search({ query: "compute area" });
    equal(observation.status === "ERROR" && observation.code, "EXECUTION_FAILED");
    match(
      observation.status === "ERROR" ? observation.message : "",
      /^Cannot open the code index ".*ws\.sqlite": /,
    );
  });
});

Deno.test("code_search never reads nor answers the secret stores the sandbox hides, even in an index tern index built", async () => {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-idx-home-ws-" }));
  const secrets: Record<string, string> = {
    ".ssh/id_ed25519": "SSHKEYMARKER7c1d private key",
    ".tern/sessions/s.jsonl": '{"text":"SESSIONMARKER2e9f"}',
    ".config/gh/hosts.yml": "oauth_token: GHTOKENMARKER55aa",
    "src/app.ts": "export function startHarborApp() {}\n",
  };
  try {
    for (const [path, text] of Object.entries(secrets)) {
      await Deno.mkdir(join(home, path, ".."), { recursive: true });
      await Deno.writeTextFile(join(home, path), text);
    }
    const ternHome = join(home, ".tern");
    // The person ran tern index in their home: the index holds the secret files.
    await indexWorkspace(home, indexPath(ternHome, home));
    const tools = new CodeIndexTools(() => ({ workspace: home, ternHome, home }));
    const search = createCodeSearchTool(() => tools);
    const symbols = createCodeSymbolsTool(() => tools);
    const ctx = { workspace: home, signal: new AbortController().signal };
    try {
      for (const marker of ["SSHKEYMARKER7c1d", "SESSIONMARKER2e9f", "GHTOKENMARKER55aa"]) {
        const output = outputOf(await search.run({ query: `${marker} private key token` }, ctx));
        const results = output.split("\n").slice(1).join("\n");
        ok(!results.includes(marker) && !results.includes(".ssh"), results);
      }
      tools.markChanged([".ssh/id_ed25519"]);
      const found = outputOf(await search.run({ query: "start harbor app" }, ctx));
      match(found, /FUNCTION startHarborApp/);
      ok(!found.includes(".ssh") && !found.includes(".tern") && !found.includes(".config"), found);
      const files = outputOf(await symbols.run({ name: "id_ed25519", find: "importers" }, ctx));
      ok(!files.includes(".ssh/"), files);
    } finally {
      tools.close();
    }
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("CodeIndexTools ranks code_search with the config's searchWeights, read at each call", async () => {
  await withIndexFixture(async ({ dir, ternHome }) => {
    let weights: Record<string, unknown> | undefined = {
      bm25: 0,
      vector: 0,
      exactSymbol: 0,
      symbolWords: 0,
      kind: { FUNCTION: 5, METHOD: 0, CLASS: 0, INTERFACE: 0 },
    };
    const tools = new CodeIndexTools(() => ({ workspace: dir, ternHome, weights }));
    const search = createCodeSearchTool(() => tools);
    const ctx = { workspace: dir, signal: new AbortController().signal };
    try {
      const weighted = outputOf(await search.run({ query: "compute area" }, ctx));
      match(weighted, /^src\/shapes\.ts:24-26 {2}FUNCTION computeArea {2}score 5\.00$/m);
      match(weighted, /^src\/shapes\.ts:18-20 {2}METHOD Square\.area {2}score 0\.00$/m);
      weights = undefined;
      const plain = outputOf(await search.run({ query: "compute area" }, ctx));
      ok(!plain.includes("score 5.00"), plain);
    } finally {
      tools.close();
    }
  });
});

Deno.test("CodeIndexTools leaves out what the person's deny rules hide, even from an index built before", async () => {
  await withIndexFixture(async ({ dir, ternHome }) => {
    await Deno.mkdir(join(dir, "secrets"));
    await Deno.writeTextFile(
      join(dir, "secrets/vault.ts"),
      "export function unlockVaultMarker9d2() { return 'k'; }\n",
    );
    // An index built with no rule holds the file.
    await indexWorkspace(dir, indexPath(ternHome, dir));
    let rules: { action: "deny"; path: string; tool?: string }[] | undefined;
    const tools = new CodeIndexTools(() => ({ workspace: dir, ternHome, rules }));
    const search = createCodeSearchTool(() => tools);
    const symbols = createCodeSymbolsTool(() => tools);
    const ctx = { workspace: dir, signal: new AbortController().signal };
    try {
      const found = () => search.run({ query: "unlock vault marker" }, ctx).then(outputOf);
      const symbol = () => symbols.run({ name: "unlockVaultMarker9d2" }, ctx).then(outputOf);
      match(await found(), /secrets\/vault\.ts/);
      match(await symbol(), /secrets\/vault\.ts/);
      rules = [{ action: "deny", path: "secrets/**" }];
      ok(!(await found()).includes("secrets/"), await found());
      ok(!(await symbol()).includes("secrets/"), await symbol());
      // A rule on the folder itself hides what it holds, as the sandbox's view does.
      rules = [{ action: "deny", path: "secrets" }];
      ok(!(await found()).includes("secrets/"), await found());
      ok(!(await symbol()).includes("secrets/"), await symbol());
      // A rule that keeps only the writing tools from the folder hides nothing.
      rules = [{ action: "deny", tool: "write", path: "secrets/**" }];
      match(await found(), /secrets\/vault\.ts/);
    } finally {
      tools.close();
    }
  });
});

Deno.test("CodeIndexTools neither indexes nor answers where a link the deny rules match leads", async () => {
  await withIndexFixture(async ({ dir, ternHome }) => {
    await Deno.mkdir(join(dir, "vault"));
    await Deno.writeTextFile(
      join(dir, "vault/key.ts"),
      "export function vaultTokenMarker7c1() { return 'VAULT_TOKEN_7c1'; }\n",
    );
    const file = indexPath(ternHome, dir);
    // An index built before holds the file.
    await indexWorkspace(dir, file);
    const rules = [{ action: "deny" as const, path: "secrets/**" }];
    const tools = new CodeIndexTools(() => ({ workspace: dir, ternHome, rules }));
    const search = createCodeSearchTool(() => tools);
    const symbols = createCodeSymbolsTool(() => tools);
    const ctx = { workspace: dir, signal: new AbortController().signal };
    const found = () => search.run({ query: "VAULT_TOKEN_7c1" }, ctx).then(outputOf);
    const symbol = () => symbols.run({ name: "vaultTokenMarker7c1" }, ctx).then(outputOf);
    try {
      // No link yet: `vault` is no one's secret.
      match(await found(), /vault\/key\.ts/);
      // A command links `secrets` to it: the sandbox's view hides `vault/`, and so does search.
      await Deno.symlink("vault", join(dir, "secrets"));
      tools.markChanged();
      ok(!(await found()).includes("vault/"), await found());
      ok(!(await symbol()).includes("vault/"), await symbol());
    } finally {
      tools.close();
    }
    // The walk took it out of the index, not only out of the answers.
    const { store } = IndexStore.open(file);
    try {
      deepEqual([...store.fileHashes().keys()].filter((path) => path.startsWith("vault/")), []);
    } finally {
      store.close();
    }
  });
});
