/** Runs tern's bash completion function the way bash-completion would, for the completion tests. */
import { equal } from "node:assert/strict";

/** What bash's completion function offers for the words typed (the last one being completed). */
export async function bashComplete(script: string, typed: string[]): Promise<string[]> {
  const out = await new Deno.Command("bash", {
    args: [
      "--norc",
      "-c",
      'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _tern; ' +
      'printf "%s\\n" "${COMPREPLY[@]}"',
      "_",
      script,
      ...typed,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).split("\n").filter(Boolean).sort();
}
