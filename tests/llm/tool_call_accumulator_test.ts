import assert from "node:assert/strict";
import { ToolCallAccumulator } from "../../src/llm/tool_call_accumulator.ts";

Deno.test("ToolCallAccumulator.add() joins argument pieces that carry only an index", () => {
  const acc = new ToolCallAccumulator();
  acc.add({ index: 0, id: "call_a", type: "function", function: { name: "read", arguments: "" } });
  acc.add({ index: 0, function: { arguments: '{"pa' } });
  acc.add({ index: 0, function: { arguments: 'th":"a.ts"' } });
  acc.add({ index: 0, function: { arguments: "}" } });
  assert.deepEqual(acc.toolCalls(), [{ id: "call_a", name: "read", arguments: '{"path":"a.ts"}' }]);
});

Deno.test("ToolCallAccumulator.add() keeps interleaved calls apart and returns them in index order", () => {
  const acc = new ToolCallAccumulator();
  assert.equal(
    acc.add({ index: 1, id: "call_b", function: { name: "grep", arguments: '{"q"' } }),
    1,
  );
  assert.equal(
    acc.add({ index: 0, id: "call_a", function: { name: "read", arguments: '{"p"' } }),
    0,
  );
  acc.add({ index: 1, function: { arguments: ':"x"}' } });
  acc.add({ index: 0, function: { arguments: ':"y"}' } });
  assert.equal(acc.size, 2);
  assert.deepEqual(acc.toolCalls(), [
    { id: "call_a", name: "read", arguments: '{"p":"y"}' },
    { id: "call_b", name: "grep", arguments: '{"q":"x"}' },
  ]);
});

Deno.test("ToolCallAccumulator.add() ignores an id and name repeated on later pieces", () => {
  const acc = new ToolCallAccumulator();
  acc.add({ index: 0, id: "call_a", function: { name: "read", arguments: "{" } });
  acc.add({ index: 0, id: "call_a", function: { name: "read", arguments: "}" } });
  acc.add({ index: 0, id: null, function: { name: null, arguments: null } });
  assert.deepEqual(acc.toolCalls(), [{ id: "call_a", name: "read", arguments: "{}" }]);
});

Deno.test("ToolCallAccumulator.add() takes an id that arrives after the first piece", () => {
  const acc = new ToolCallAccumulator();
  acc.add({ index: 0, function: { name: "read", arguments: "{" } });
  acc.add({ index: 0, id: "late", function: { arguments: "}" } });
  assert.deepEqual(acc.toolCalls(), [{ id: "late", name: "read", arguments: "{}" }]);
});

Deno.test("ToolCallAccumulator.add() without indexes opens a call per new id", () => {
  const acc = new ToolCallAccumulator();
  assert.equal(acc.add({ id: "a", function: { name: "read", arguments: "{" } }), 0);
  assert.equal(acc.add({ function: { arguments: "}" } }), 0);
  assert.equal(acc.add({ id: "b", function: { name: "grep", arguments: "{}" } }), 1);
  assert.equal(acc.add({ id: "a", function: { arguments: " " } }), 0);
  assert.deepEqual(acc.toolCalls(), [
    { id: "a", name: "read", arguments: "{} " },
    { id: "b", name: "grep", arguments: "{}" },
  ]);
});

Deno.test("ToolCallAccumulator.toolCalls() names a call without an id after its index", () => {
  const acc = new ToolCallAccumulator();
  acc.add({ index: 3, function: { name: "ls", arguments: "{}" } });
  assert.deepEqual(acc.toolCalls(), [{ id: "call_3", name: "ls", arguments: "{}" }]);
});

Deno.test("ToolCallAccumulator.toolCalls() is empty before any piece", () => {
  assert.deepEqual(new ToolCallAccumulator().toolCalls(), []);
});

Deno.test("ToolCallAccumulator.add() joins an id and name split across pieces", () => {
  const acc = new ToolCallAccumulator();
  acc.add({ index: 0, id: "call_", function: { name: "ba", arguments: "" } });
  acc.add({ index: 0, id: "x1", function: { name: "sh", arguments: '{"command"' } });
  acc.add({ index: 0, function: { arguments: ':"ls"}' } });
  acc.add({ index: 1, id: "call_y", function: { name: "re" } });
  acc.add({ index: 1, function: { name: "ad", arguments: "{}" } });
  assert.deepEqual(acc.toolCalls(), [
    { id: "call_x1", name: "bash", arguments: '{"command":"ls"}' },
    { id: "call_y", name: "read", arguments: "{}" },
  ]);
});

Deno.test("ToolCallAccumulator.add() does not double an id and name repeated whole on every piece", () => {
  const acc = new ToolCallAccumulator();
  acc.add({ index: 0, id: "call_a", type: "function", function: { name: "bash", arguments: "" } });
  acc.add({ index: 0, id: "call_a", type: "function", function: { name: "bash", arguments: "{" } });
  acc.add({ index: 0, id: "call_a", type: "function", function: { name: "bash", arguments: "}" } });
  assert.deepEqual(acc.toolCalls(), [{ id: "call_a", name: "bash", arguments: "{}" }]);
});

Deno.test("ToolCallAccumulator.add() takes a piece that repeats the value so far and grows it", () => {
  const acc = new ToolCallAccumulator();
  acc.add({ index: 0, id: "call", function: { name: "read" } });
  acc.add({ index: 0, id: "call_a", function: { name: "read_", arguments: "{" } });
  acc.add({ index: 0, id: "call_a", function: { name: "read_file", arguments: "}" } });
  assert.deepEqual(acc.toolCalls(), [{ id: "call_a", name: "read_file", arguments: "{}" }]);
});

Deno.test("ToolCallAccumulator.add() opens a new call for another id under an index whose call is whole", () => {
  const acc = new ToolCallAccumulator();
  assert.equal(
    acc.add({ index: 0, id: "call_k3j1", function: { name: "write", arguments: '{"p":1}' } }),
    0,
  );
  assert.equal(
    acc.add({ index: 0, id: "call_9x2m", function: { name: "write", arguments: '{"p":2}' } }),
    1,
  );
  assert.equal(acc.add({ index: 1, id: "call_c", function: { name: "read", arguments: "{" } }), 2);
  assert.equal(acc.add({ index: 1, function: { arguments: "}" } }), 2);
  assert.deepEqual(acc.toolCalls(), [
    { id: "call_k3j1", name: "write", arguments: '{"p":1}' },
    { id: "call_9x2m", name: "write", arguments: '{"p":2}' },
    { id: "call_c", name: "read", arguments: "{}" },
  ]);
});

Deno.test("ToolCallAccumulator.add() sends later pieces of a reused index to the newest call under it", () => {
  const acc = new ToolCallAccumulator();
  acc.add({ index: 0, id: "a", function: { name: "read", arguments: "{}" } });
  acc.add({ index: 0, id: "b", function: { name: "grep", arguments: '{"q":' } });
  acc.add({ index: 0, function: { arguments: '"x"}' } });
  assert.deepEqual(acc.toolCalls(), [
    { id: "a", name: "read", arguments: "{}" },
    { id: "b", name: "grep", arguments: '{"q":"x"}' },
  ]);
});

Deno.test("ToolCallAccumulator.add() without indexes or ids opens a new call for a named whole object after a whole one", () => {
  const acc = new ToolCallAccumulator();
  const piece = (args: string) => ({
    id: "",
    type: "",
    function: { name: "bash", arguments: args },
  });
  assert.equal(acc.add(piece('{"command": "echo A"}')), 0);
  assert.equal(acc.add(piece('{"command": "echo B"}')), 1);
  assert.deepEqual(acc.toolCalls(), [
    { id: "call_0", name: "bash", arguments: '{"command": "echo A"}' },
    { id: "call_1", name: "bash", arguments: '{"command": "echo B"}' },
  ]);
});

Deno.test("ToolCallAccumulator.add() keeps pieces with the call's own id and name in that call", () => {
  const acc = new ToolCallAccumulator();
  acc.add({ index: 0, id: "call_a", function: { name: "edit", arguments: '{"old":"}"' } });
  acc.add({ index: 0, id: "call_a", function: { name: "edit", arguments: ',"new":{"x":1}' } });
  acc.add({ index: 0, id: "call_a", function: { name: "edit", arguments: "}" } });
  assert.deepEqual(acc.toolCalls(), [
    { id: "call_a", name: "edit", arguments: '{"old":"}","new":{"x":1}}' },
  ]);
});

Deno.test("ToolCallAccumulator.add() keeps an argument piece that opens an object in an unfinished call", () => {
  const acc = new ToolCallAccumulator();
  acc.add({ function: { name: "edit", arguments: '{"a":' } });
  acc.add({ function: { name: "edit", arguments: '{"b":1}' } });
  acc.add({ function: { arguments: "}" } });
  assert.deepEqual(acc.toolCalls(), [{ id: "call_0", name: "edit", arguments: '{"a":{"b":1}}' }]);
});

Deno.test("ToolCallAccumulator.add() takes 50,000 calls in linear time, with an index or without", () => {
  // Each new call used to scan every call before it (22 s for 100,000); now a few ms per 1,000.
  const calls = 50_000;
  const started = performance.now();
  const indexed = new ToolCallAccumulator();
  for (let i = 0; i < calls; i++) {
    indexed.add({ index: i, id: `id${i}`, type: "function", function: { name: "list" } });
    indexed.add({ index: i, function: { arguments: "{}" } });
  }
  const unindexed = new ToolCallAccumulator();
  for (let i = 0; i < calls; i++) {
    unindexed.add({ id: `id${i}`, function: { name: "list", arguments: "{" } });
    unindexed.add({ id: `id${i}`, function: { arguments: "}" } });
  }
  assert.equal(indexed.toolCalls().length, calls);
  assert.equal(unindexed.toolCalls().length, calls);
  assert.deepEqual(unindexed.toolCalls()[calls - 1], {
    id: `id${calls - 1}`,
    name: "list",
    arguments: "{}",
  });
  const elapsedMs = performance.now() - started;
  assert.ok(elapsedMs < 5_000, `took ${Math.round(elapsedMs)} ms`);
});

Deno.test("ToolCallAccumulator.add() keeps a call's first id when later pieces bring another", () => {
  // Poolside: one id on a call's first piece, another on every later one.
  const acc = new ToolCallAccumulator();
  acc.add({
    index: 0,
    id: "call_first",
    type: "function",
    function: { name: "bash", arguments: "" },
  });
  for (const piece of ['{"command"', ': "ls', '"}']) {
    acc.add({ index: 0, id: "call_later", function: { arguments: piece } });
  }
  // The other id on a piece after the arguments are whole continues the call too.
  acc.add({ index: 0, id: "call_later", function: { arguments: "" } });
  assert.deepEqual(acc.toolCalls(), [
    { id: "call_first", name: "bash", arguments: '{"command": "ls"}' },
  ]);
});

Deno.test("ToolCallAccumulator.add() sets apart calls without parameters sent under one index", () => {
  const acc = new ToolCallAccumulator();
  acc.add({ index: 0, id: "call_a", type: "function", function: { name: "now", arguments: "" } });
  acc.add({ index: 0, id: "call_b", type: "function", function: { name: "date", arguments: "" } });
  acc.add({
    index: 0,
    id: "call_c",
    type: "function",
    function: { name: "pwd", arguments: "null" },
  });
  acc.add({
    index: 0,
    id: "call_d",
    type: "function",
    function: { name: "who", arguments: "null" },
  });
  assert.deepEqual(acc.toolCalls(), [
    { id: "call_a", name: "now", arguments: "" },
    { id: "call_b", name: "date", arguments: "" },
    { id: "call_c", name: "pwd", arguments: "" },
    { id: "call_d", name: "who", arguments: "" },
  ]);
});
