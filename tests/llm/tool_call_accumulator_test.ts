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
