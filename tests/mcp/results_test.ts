import { deepEqual, equal } from "node:assert/strict";
import { resultObservation } from "../../src/mcp/results.ts";

Deno.test("resultObservation() joins text parts", () => {
  const obs = resultObservation("mcp__s__t", {
    content: [{ type: "text", text: "one" }, { type: "text", text: "two" }],
  });
  deepEqual(obs, { status: "SUCCEEDED", output: "one\ntwo" });
});

Deno.test("resultObservation() describes images and inlines embedded text resources", () => {
  const obs = resultObservation("mcp__s__t", {
    content: [
      { type: "image", data: "AAECAw==", mimeType: "image/png" },
      { type: "resource", resource: { uri: "file:///x.txt", mimeType: "text/plain", text: "hi" } },
      { type: "resource", resource: { uri: "file:///b.bin", blob: "AAAA" } },
      { type: "resource_link", uri: "file:///y", name: "y" },
    ],
  });
  equal(obs.status, "SUCCEEDED");
  if (obs.status !== "SUCCEEDED") return;
  equal(
    obs.output,
    [
      "[image image/png, 4 bytes: not shown]",
      "[resource file:///x.txt text/plain]\nhi",
      "[resource file:///b.bin, 3 bytes of binary: not shown]",
      "[resource link file:///y (y)]",
    ].join("\n"),
  );
});

Deno.test("resultObservation() turns isError into an ERROR observation", () => {
  const obs = resultObservation("mcp__s__t", {
    content: [{ type: "text", text: "no such repo" }],
    isError: true,
  });
  deepEqual(obs, {
    status: "ERROR",
    code: "EXECUTION_FAILED",
    message: 'MCP tool "mcp__s__t" reported an error: no such repo',
  });
});

Deno.test("resultObservation() shows structured content when there is no content", () => {
  const obs = resultObservation("t", { content: [], structuredContent: { n: 1 } });
  deepEqual(obs, { status: "SUCCEEDED", output: '{\n  "n": 1\n}' });
});

Deno.test("resultObservation() shows deeply nested or huge structured content compact, never indented", () => {
  // 4,500 levels in about 9 KB: indented, each level two spaces more, it was 40 MB.
  let deep: unknown = [];
  for (let i = 0; i < 4_500; i++) deep = [deep];
  for (const result of [{ structuredContent: { a: deep } }, { toolResult: { a: deep } }]) {
    const obs = resultObservation("mcp__s__t", result);
    equal(obs.status, "SUCCEEDED");
    if (obs.status !== "SUCCEEDED") continue;
    equal(obs.output, JSON.stringify({ a: deep }));
  }
  // An indented form past 2,000,000 characters: the whole value, compact.
  const wide = { rows: Array.from({ length: 200_000 }, (_, i) => ({ id: i })) };
  const obs = resultObservation("mcp__s__t", { structuredContent: wide });
  equal(obs.status === "SUCCEEDED" && obs.output, JSON.stringify(wide));
  // Shallow and small: indented as before.
  const small = resultObservation("mcp__s__t", { structuredContent: { a: [1, { b: 2 }] } });
  equal(
    small.status === "SUCCEEDED" && small.output,
    JSON.stringify({ a: [1, { b: 2 }] }, null, 2),
  );
});
