/** The DNS recorder's packet handling (tests/support/netns.ts). */
import { deepEqual, equal } from "node:assert/strict";
import { noSuchName, question } from "../support/netns.ts";

/** A query for `name` (type A, class IN) with id 0xbeef and recursion desired, plus an OPT. */
function query(name: string): Uint8Array {
  const labels = name.split(".").flatMap((l) => [l.length, ...new TextEncoder().encode(l)]);
  const header = [0xbe, 0xef, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 1];
  const opt = [0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0];
  return new Uint8Array([...header, ...labels, 0, 0, 1, 0, 1, ...opt]);
}

Deno.test("question() reads the name asked for and where the question ends", () => {
  const packet = query("registry.npmjs.org");
  deepEqual(question(packet), { name: "registry.npmjs.org", end: 12 + 20 + 4 });
});

Deno.test("noSuchName() answers the same id and question with NXDOMAIN and no records", () => {
  const packet = query("dl.deno.land");
  const reply = noSuchName(packet, question(packet).end);
  deepEqual([...reply.subarray(0, 4)], [0xbe, 0xef, 0x81, 0x83]);
  deepEqual([...reply.subarray(4, 12)], [0, 1, 0, 0, 0, 0, 0, 0]);
  equal(question(reply).name, "dl.deno.land");
  equal(reply.length, question(packet).end, "the OPT record is left out");
});
