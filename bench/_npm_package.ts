/**
 * Installs a published npm package for the code index benchmarks with `deno cache` into a cache
 * folder outside the repository (network to the npm registry at bench time only), and copies
 * its files into a workspace the benchmarks index.
 */
import { join } from "node:path";

/** The default cache: outside the repository, kept between runs. */
export const BENCH_CACHE = "/tmp/tern-bench-cache";

/**
 * The folder holding `name@version` as published, installing it into `cache` first when absent
 * (`DENO_DIR=<cache> deno cache npm:<name>@<version>`).
 */
export async function installPackage(
  name: string,
  version: string,
  cache = BENCH_CACHE,
): Promise<string> {
  const dir = join(cache, "npm", "registry.npmjs.org", name, version);
  if (await exists(join(dir, "package.json"))) return dir;
  await Deno.mkdir(cache, { recursive: true });
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["cache", "--no-config", "--node-modules-dir=none", `npm:${name}@${version}`],
    env: { DENO_DIR: cache },
    cwd: cache,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success || !await exists(join(dir, "package.json"))) {
    const detail = new TextDecoder().decode(output.stderr).trim().split("\n").pop();
    throw new Error(`Cannot install npm:${name}@${version} into "${cache}": ${detail}`);
  }
  return dir;
}

/** Every file under `dir` (relative, `/`-separated), sorted. */
export async function listFiles(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(join(dir, prefix))) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory) out.push(...await listFiles(dir, path));
    else if (entry.isFile) out.push(path);
  }
  return out.sort();
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}
