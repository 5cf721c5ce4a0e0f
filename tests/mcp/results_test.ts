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
