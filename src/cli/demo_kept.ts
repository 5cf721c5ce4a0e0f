/**
 * What `tern demo` keeps: its project and its tern directory with the session file, checked
 * (the file parses, its short id finds it the way `--resume` does) and described with the exact
 * commands that resume it, show it and remove it all.
 */
import { findSession } from "../session/paths.ts";

/** Checks the session file the demo leaves; `problems` is empty when it is resumable. */
export async function checkKept(
  where: { ternHome: string; workspace: string; sessionPath: string },
): Promise<{ entries: number; problems: string[] }> {
  const { ternHome, workspace, sessionPath } = where;
  const problems: string[] = [];
  let lines: unknown[] = [];
  try {
    const text = await Deno.readTextFile(sessionPath);
    lines = text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
  } catch (error) {
    const why = (error as Error).message;
    return { entries: 0, problems: [`the session file "${sessionPath}" does not parse: ${why}`] };
  }
  const header = lines[0] as { type?: string; id?: string; cwd?: string } | undefined;
  if (header?.type !== "session" || header.cwd !== workspace || typeof header.id !== "string") {
    problems.push(`the session file "${sessionPath}" has no header for the project`);
  } else {
    const found = await findSession(ternHome, header.id.slice(0, 8), workspace).catch(
      (error: Error) => error.message,
    );
    if (found !== sessionPath) {
      problems.push(`session ${header.id.slice(0, 8)} is not found by its short id: ${found}`);
    }
  }
  // A resumed session brings back its last mode: a person continuing it must be asked.
  const modes = lines.flatMap((line) => {
    const entry = line as { type?: string; mode?: string };
    return entry.type === "mode" ? [entry.mode] : [];
  });
  if (modes.at(-1) !== "ask") {
    problems.push(`the session would resume in mode "${modes.at(-1)}", not "ask"`);
  }
  return { entries: Math.max(0, lines.length - 1), problems };
}

/**
 * The KEPT section's lines: what stays, where, and the commands (each on a line of its own, to
 * copy) that resume the session, show it and remove it all.
 */
export function keptLines(
  where: { kept: string; workspace: string; ternHome: string; sessionId: string },
): string[] {
  const { kept, workspace, ternHome, sessionId } = where;
  const tern = `TERN_HOME=${quote(ternHome)} tern -C ${quote(workspace)}`;
  return [
    `${kept}/`,
    "  hello-demo/  the project",
    "  tern-home/   its tern directory: the session file and its checkpoints, the audit log,",
    "               the code index, the sandbox's helper files",
    "nothing else is left, and no process of the demo is running",
    "continue the session with a model of yours (its key in the environment; the demo's was a",
    "script; tern on your PATH: ./run.sh install):",
    `  ${tern} --resume ${sessionId} --model <model>`,
    "show it, offline:",
    `  ${tern} sessions show ${sessionId}`,
    "remove it all:",
    `  rm -rf ${quote(kept)}`,
  ];
}

/** `text` as one shell word (single-quoted when it holds anything but plain path characters). */
function quote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
