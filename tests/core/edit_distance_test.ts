import { equal } from "node:assert/strict";
import { editDistance } from "../../src/core/edit_distance.ts";

Deno.test("editDistance() counts a letter added, dropped or changed, and two neighbours swapped, as one edit", () => {
  equal(editDistance("config", "config"), 0);
  equal(editDistance("conifg", "config"), 1);
  equal(editDistance("confg", "config"), 1);
  equal(editDistance("configg", "config"), 1);
  equal(editDistance("canfig", "config"), 1);
  equal(editDistance("modle", "model"), 1);
  equal(editDistance("", "run"), 3);
  equal(editDistance("sandbox", "sessions"), 6);
});
