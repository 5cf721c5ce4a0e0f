/**
 * Here-docs against bash itself. tree-sitter's grammar ends some here-docs elsewhere than bash
 * (`<<E"O"F` ends at `EOF` in bash, at `E"O"F` in the grammar) and reads a backslash before a
 * carriage return as a line continuation, so a command bash runs could be body text or an
 * argument to the analysis and escape the rules and the classifier. Every script here runs in a
 * real bash; each command bash runs (`touch Pn`, which leaves a file) must be one the analysis
 * names, or the analysis must refuse the script (or say that some of what it runs is unseen).
 */
import { deepEqual, ok } from "node:assert/strict";
import {
  analyzeShell,
  analyzeShellParsed,
  type ShellAnalysis,
} from "../../src/sandbox/shell/parse.ts";
import { classifyShell } from "../../src/sandbox/shell/classify.ts";
import { seededRandom } from "../support/seeded.ts";

/** The markers (`P1`, `P2`, …) bash's run of `script` left in a fresh folder. */
async function markersBashRuns(script: string): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "tern-heredoc-" });
  try {
    const child = new Deno.Command("bash", {
      args: ["--norc", "--noprofile", "-c", script],
      cwd: dir,
      clearEnv: true,
      env: { PATH: "/usr/bin:/bin" },
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await child.status;
    clearTimeout(timer);
    const found: string[] = [];
    for await (const entry of Deno.readDir(dir)) {
      if (/^P\d+$/.test(entry.name)) found.push(entry.name);
    }
    return found.sort();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * The markers a command of `analysis` touches, or undefined when it refused the script or says
 * some of what it runs is unseen (code it could not read, which rules and the classifier treat
 * as hidden).
 */
function markersSeen(analysis: ShellAnalysis): Set<string> | undefined {
  if (!analysis.ok || analysis.unseen.length > 0) return undefined;
  return new Set(
    analysis.commands.filter((command) => command.argv[0] === "touch").flatMap((command) =>
      command.argv.slice(1)
    ),
  );
}

/** Fails when bash runs a marker that the analysis of `script` neither names nor refuses. */
async function checkScript(
  script: string,
): Promise<{ ran: number; refused: boolean; mismatch: boolean }> {
  const ran = await markersBashRuns(script);
  let refused = false;
  let mismatch = false;
  for (const analysis of [await analyzeShell(script), await analyzeShellParsed(script)]) {
    const seen = markersSeen(analysis);
    if (seen === undefined) {
      refused = true;
      mismatch ||= !analysis.ok && analysis.error.includes("bash may end the here-doc");
      continue;
    }
    const hidden = ran.filter((marker) => !seen.has(marker));
    deepEqual(hidden, [], `bash ran ${hidden.join(", ")} unseen in ${JSON.stringify(script)}`);
  }
  return { ran: ran.length, refused, mismatch };
}

Deno.test("a here-doc the parser ends elsewhere than bash is refused, not misread", async () => {
  const hiding = [
    // bash's delimiter is EOF; the grammar's is E"O"F, and `touch P1` was body text to it.
    'cat <<E"O"F\nx\nEOF\ntouch P1\nE"O"F',
    // The grammar ends at ` EOF` or `EOF\r`, bash does not: the next here-doc then swallows.
    "cat <<EOF\n EOF\ncat <<Z\nEOF\ntouch P1\nZ",
    "cat <<EOF\nEOF\r\ncat <<Z\nEOF\ntouch P1\nZ",
    // A backslash at a line's end joins it to the next in bash, not in the grammar.
    "cat <<EOF\nx\\\nEOF\ncat <<Z\nEOF\ntouch P1\nZ",
    // A quote left open on the start's line carries bash's line on.
    "cat <<EOF; echo 'a\nEOF\n'; touch P1",
  ];
  for (const script of hiding) {
    const { ran } = await checkScript(script);
    ok(ran > 0, `bash ran no marker in ${JSON.stringify(script)}: the case tests nothing`);
  }
  const refused = await analyzeShell(hiding[0]);
  ok(!refused.ok && /here-doc/.test(refused.error), JSON.stringify(refused));
});

Deno.test("a backslash before a carriage return no longer passes a command as read-only", async () => {
  // bash runs `rm -rf x` here; the grammar read one `echo safe rm -rf x`, which only reads.
  const script = "echo safe \\\r\nrm -rf x";
  const dir = await Deno.makeTempDir({ prefix: "tern-cr-" });
  try {
    await Deno.writeTextFile(`${dir}/x`, "kept?");
    await new Deno.Command("bash", { args: ["-c", script], cwd: dir, stdout: "null" }).output();
    const kept = await Deno.lstat(`${dir}/x`).then(() => true, () => false);
    ok(!kept, "bash did not run rm: the case tests nothing");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  const risk = await classifyShell(script);
  deepEqual([risk.readOnly, risk.label], [false, "unknown"]);
  ok(/carriage return/.test(risk.reasons[0]), risk.reasons[0]);
});

Deno.test("the here-docs models write still parse, with what they run", async () => {
  const everyday: [string, string[][]][] = [
    ["cat > out.txt <<'EOF'\nconst a = `${b}`; $(x) \\\nEOF\ncat out.txt", [["cat"], [
      "cat",
      "out.txt",
    ]]],
    ['cat <<EOF > "$out"\nx\nEOF', [["cat"]]],
    ["python3 <<'PY' | tail -5\nprint(1)\nPY", [["python3"], ["tail", "-5"]]],
    ["cat <<-EOF\n\tindented\n\tEOF\necho done", [["cat"], ["echo", "done"]]],
    ["mkdir -p a && cat > a/b <<'EOF'\nhi\nEOF", [["mkdir", "-p", "a"], ["cat"]]],
    ['echo "$(cat <<EOF\nx\nEOF\n)"', [["echo", '"$(cat <<EOF\nx\nEOF\n)"'], ["cat"]]],
    ["cat <<EOF # it's a comment\nx\nEOF", [["cat"]]],
  ];
  for (const [script, argvs] of everyday) {
    const analysis = await analyzeShell(script);
    ok(analysis.ok, `${JSON.stringify(script)}: ${JSON.stringify(analysis)}`);
    deepEqual(analysis.commands.map((command) => command.argv), argvs, script);
  }
});

const HEADS = ["cat", "cat", "cat > o", "touch M &&  cat", ":", "bash", "cat -"];
const OPERATORS = ["<<", "<<-", "<< ", "<<- "];
const DELIMITERS = [
  "EOF",
  "EOF",
  "EOF",
  "'EOF'",
  "'EOF'",
  '"EOF"',
  "\\EOF",
  'E"O"F',
  "'E'OF",
  "E\\OF",
  '"E\\"OF"',
  "''",
  "$X",
  "EOF1",
];
/** What may follow a here-doc's start on its line; the second list mostly breaks the script. */
const RESTS = ["", " > o2", " | cat", " && touch M", "; touch M", " # it's", " 'a b'", ' "x $y"'];
const BREAKING_RESTS = [" 'a", ' "b', " \\", " $(echo", " `x", " <<Z", " )", ' "${x}"'];
/** Body and script lines; the second list mostly breaks the script. */
const LINES = [
  "x",
  "x",
  "EOF",
  "EOF",
  "touch M",
  "touch M",
  "touch M # c",
  "",
  " EOF",
  "EOF ",
  "\tEOF",
  "\t\tEOF",
  "EOF\r",
  "EO\\",
  "F",
  "x\\",
  "x\\\\",
  "x\\\\\\",
  "EOFx",
  'E"O"F',
  "'EOF'",
  "\\EOF",
  "EOF1",
  "cat <<Z",
  "Z",
];
const BREAKING_LINES = ["$(echo", ")", "`", "'", '"', "echo $(touch M)"];

function generate(count: number, seed: number): string[] {
  const next = seededRandom(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)];
  const scripts: string[] = [];
  for (let n = 0; n < count; n++) {
    const lines: string[] = [];
    // Delimiters as written so far: a line that repeats one is where the grammar may end.
    const written: string[] = [];
    const length = 2 + Math.floor(next() * 7);
    for (let l = 0; l < length; l++) {
      if (next() < 0.3) {
        const delimiter = pick(DELIMITERS);
        written.push(delimiter);
        const rest = next() < 0.1 ? pick(BREAKING_RESTS) : next() < 0.7 ? "" : pick(RESTS);
        lines.push(`${pick(HEADS)} ${pick(OPERATORS)}${delimiter}${rest}`);
      } else if (written.length > 0 && next() < 0.2) {
        lines.push(pick(written));
      } else {
        lines.push(pick(next() < 0.05 ? BREAKING_LINES : LINES));
      }
    }
    let marker = 0;
    scripts.push(lines.join(next() < 0.05 ? "\r\n" : "\n").replace(/\bM\b/g, () => `P${++marker}`));
  }
  return scripts;
}

Deno.test("no generated here-doc script runs a command its analysis hides", async () => {
  const seed = Number(Deno.env.get("HEREDOC_SEED") ?? 7);
  const scripts = generate(Number(Deno.env.get("HEREDOC_COUNT") ?? 3000), seed);
  let checked = 0;
  let mismatched = 0;
  const batch = 16;
  for (let i = 0; i < scripts.length; i += batch) {
    const results = await Promise.all(scripts.slice(i, i + batch).map(checkScript));
    for (const result of results) {
      if (result.ran > 0 && !result.refused) checked++;
      if (result.mismatch) mismatched++;
    }
  }
  // The property means something only when many scripts ran markers the analysis accepted,
  // and the here-doc check refused many.
  ok(checked >= 60, `only ${checked} of ${scripts.length} scripts ran a marker that was checked`);
  ok(mismatched >= 40, `the here-doc check refused only ${mismatched} of ${scripts.length}`);
});

Deno.test("a command the parser would take seconds over is refused at its budget, and the next parses afresh", async () => {
  // The grammar's time grows with the square of here-doc starts on one line: 100 KB took 10 s.
  const slow = Array.from({ length: 8000 }, (_, i) => `cat <<E${i}`).join("; ") + "\n";
  // Whole, it takes 10 s here: the refusal comes from the budget's halt, not from its end.
  const refused = await analyzeShellParsed(slow, 200);
  ok(!refused.ok && /longer than 0.2 s/.test(refused.error), JSON.stringify(refused));
  // A halted parse resumes on the next call unless the parser is reset: this one must be read
  // as itself, not as the rest of the one before.
  const next = await analyzeShellParsed("for f in a; do rm -rf $f; done");
  ok(next.ok, JSON.stringify(next));
  deepEqual(next.commands.map((command) => command.argv), [["rm", "-rf", "$f"]]);
});
