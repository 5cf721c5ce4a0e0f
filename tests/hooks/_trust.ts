/**
 * Trusts project hook files as `tern hooks trust <digest>` does, for tests that need trusted
 * hooks: each source pinned and its digest taken (pinForTrust), then recorded as pinned
 * (trustPinned).
 */
import type { HookSource } from "../../src/sandbox/hooks/config.ts";
import { pinForTrust, trustPinned } from "../../src/sandbox/hooks/load.ts";

export async function trustHooks(
  places: { ternHome: string; workspace: string },
  sources: readonly HookSource[],
): Promise<void> {
  const pinned: HookSource[] = [];
  for (const source of sources) pinned.push((await pinForTrust(source, places.workspace)).source);
  await trustPinned(places, pinned);
}
