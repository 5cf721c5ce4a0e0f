/** A JSON snapshot file: compared by default, rewritten when UPDATE_SNAPSHOTS=1. */
import { deepEqual } from "node:assert/strict";

/**
 * Compares `value` with the JSON stored at `url`, or stores it when the environment variable
 * UPDATE_SNAPSHOTS is "1". A missing file fails with a hint to create it.
 */
export async function assertJsonSnapshot(url: URL, value: unknown): Promise<void> {
  const text = JSON.stringify(value, null, 2) + "\n";
  if (Deno.env.get("UPDATE_SNAPSHOTS") === "1") {
    await Deno.writeTextFile(url, text);
    return;
  }
  let stored: string;
  try {
    stored = await Deno.readTextFile(url);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    throw new Error(`Snapshot "${url.pathname}" is missing: run with UPDATE_SNAPSHOTS=1`);
  }
  deepEqual(JSON.parse(text), JSON.parse(stored), "run with UPDATE_SNAPSHOTS=1 if intended");
}
