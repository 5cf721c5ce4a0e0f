/** Temporary HOME and working directory for config tests; removed after each use. */
import { dirname, join } from "node:path";

export interface ConfigFixture {
  root: string;
  /** Stands in for HOME; the user config goes in `<home>/.tern/config.jsonc`. */
  home: string;
  /** The working directory: `.tern/config.jsonc` and `.env` go here. */
  cwd: string;
  /** Writes `text` to `path` (relative to `root`), creating folders. Returns the absolute path. */
  write(path: string, text: string): string;
}

/** Runs `fn` with fresh `home/` and `cwd/` folders under a temp root, then deletes the root. */
export async function withFixture(fn: (fixture: ConfigFixture) => Promise<void>): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern_config_" }));
  const fixture: ConfigFixture = {
    root,
    home: join(root, "home"),
    cwd: join(root, "cwd"),
    write(path, text) {
      const file = join(root, path);
      Deno.mkdirSync(dirname(file), { recursive: true });
      Deno.writeTextFileSync(file, text);
      return file;
    },
  };
  Deno.mkdirSync(fixture.home);
  Deno.mkdirSync(fixture.cwd);
  try {
    await fn(fixture);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}
