import { deepEqual } from "node:assert/strict";
import { denoDirEnv } from "../../src/core/deno_dir_env.ts";

Deno.test("denoDirEnv() hands on DENO_DIR when set, nothing when not", () => {
  const before = Deno.env.get("DENO_DIR");
  try {
    Deno.env.set("DENO_DIR", "/var/cache/deno-test");
    deepEqual(denoDirEnv(), { DENO_DIR: "/var/cache/deno-test" });
    Deno.env.delete("DENO_DIR");
    deepEqual(denoDirEnv(), {});
  } finally {
    if (before === undefined) Deno.env.delete("DENO_DIR");
    else Deno.env.set("DENO_DIR", before);
  }
});
