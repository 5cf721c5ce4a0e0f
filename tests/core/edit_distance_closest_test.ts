import { equal } from "node:assert/strict";
import { closestName } from "../../src/core/edit_distance.ts";

Deno.test("closestName() prefers, of equally near names, the one with the same letters", () => {
  // "modle" is one edit from both: "model" swapped, "mode" with a letter more.
  equal(closestName("modle", ["mode", "model"], 3), "model");
  equal(closestName("modle", ["model", "mode"], 3), "model");
  equal(closestName("profilse", ["profile", "profiles"], 3), "profiles");
  // Then the one of the same length.
  equal(closestName("modxl", ["mode", "model"], 3), "model");
  equal(closestName("MaxRound", ["maxRounds"], 3), "maxRounds");
  equal(closestName("sandbox", ["sessions"], 3), undefined);
});

Deno.test("closestName() does not measure a name far longer than every candidate", () => {
  const started = performance.now();
  equal(closestName("a".repeat(1_000_000), ["model", "mode", "maxRounds"], 3), undefined);
  equal(performance.now() - started < 1_000, true);
});
