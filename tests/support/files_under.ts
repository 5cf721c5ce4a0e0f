/** Every file below a folder, for tests that look for what a run left anywhere. */
import { join } from "node:path";

/** The paths of every regular file below `dir`, folders followed, links not. */
export async function filesUnder(dir: string): Promise<string[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) files.push(...await filesUnder(path));
    else if (entry.isFile) files.push(path);
  }
  return files;
}
