/**
 * Fits the coefficients of `estimateTokens()` (src/context/tokens.ts) to o200k_base on the
 * corpus in tests/fixtures/tokens/, and prints them as TypeScript to paste into tokens.ts.
 *
 * The samples in HOLDOUT (tests/support/token_corpus.ts) are left out. The others are cut into
 * chunks of about 600 characters at line ends, so the fit sees a few hundred rows rather than a
 * few dozen, and the coefficients minimise the squared relative error per chunk, each at least
 * 0 (bounded least squares, by coordinate descent). A few coefficients are bounded from below
 * or fixed by how o200k_base treats long runs and rare characters, which the corpus holds too
 * few of to fit (see BOUNDS). Prints the error per sample for the fitted and the held-out
 * samples, then refits with each sample left out in turn and prints the worst of those.
 *
 * Usage: `deno run --allow-read bench/token_fit.ts`
 */
import { countTokens } from "gpt-tokenizer";
import { countTokenClasses, type TokenClassCounts } from "../src/context/_token_classes.ts";
import { HOLDOUT, loadTokenCorpus, type TokenSample } from "../tests/support/token_corpus.ts";

type Coefficients = Record<keyof TokenClassCounts, number>;

/** The count names, in the order `countTokenClasses()` returns them. */
const TOKEN_CLASSES = Object.keys(countTokenClasses("")) as (keyof TokenClassCounts)[];

/** Characters per chunk of a fitted sample, at least (a chunk ends at a line end). */
const CHUNK_CHARS = 600;

/**
 * Coefficients the corpus cannot pin down, as [lowest, highest], from probes of o200k_base: it
 * takes about 8 letters of a repeated letter per token (so a letter past the eighth costs at
 * least 0.1) and 16 tabs or line breaks per token (1/16 for a blank past the sixteenth); an
 * emoji or a curly apostrophe in a word costs a token more than its ASCII stand-in, an arrow,
 * a dash, a bullet or a curly quote none more, so a symbol costs 0.5 on top of its run.
 */
const BOUNDS: Partial<Record<keyof TokenClassCounts, [number, number]>> = {
  longWordChars: [0.1, Infinity],
  blankChars: [1 / 16, 1 / 16],
  otherSymbols: [0.5, 0.5],
};

interface Row {
  id: string;
  counts: TokenClassCounts;
  tokens: number;
}

function chunks(text: string): string[] {
  const out: string[] = [];
  let current = "";
  for (const line of text.split(/(?<=\n)/)) {
    current += line;
    if (current.length >= CHUNK_CHARS) {
      out.push(current);
      current = "";
    }
  }
  if (current.length > 0) out.push(current);
  return out;
}

function row(id: string, text: string): Row {
  return { id, counts: countTokenClasses(text), tokens: countTokens(text) };
}

/** Bounded least squares on relative errors: minimises Σ ((Σ c·count) / tokens − 1)². */
function fitCoefficients(rows: Row[]): Coefficients {
  const n = TOKEN_CLASSES.length;
  const gram = Array.from({ length: n }, () => new Float64Array(n));
  const rhs = new Float64Array(n);
  for (const { counts, tokens } of rows) {
    const a = TOKEN_CLASSES.map((name) => counts[name] / tokens);
    for (let i = 0; i < n; i++) {
      rhs[i] += a[i];
      for (let j = 0; j < n; j++) gram[i][j] += a[i] * a[j];
    }
  }
  const low = TOKEN_CLASSES.map((name) => BOUNDS[name]?.[0] ?? 0);
  const high = TOKEN_CLASSES.map((name) => BOUNDS[name]?.[1] ?? Infinity);
  const c = low.slice();
  for (let sweep = 0; sweep < 100_000; sweep++) {
    let moved = 0;
    for (let j = 0; j < n; j++) {
      if (gram[j][j] === 0) continue;
      let slope = -rhs[j];
      for (let k = 0; k < n; k++) slope += gram[j][k] * c[k];
      const next = Math.min(high[j], Math.max(low[j], c[j] - slope / gram[j][j]));
      moved = Math.max(moved, Math.abs(next - c[j]));
      c[j] = next;
    }
    if (moved < 1e-12) break;
  }
  return Object.fromEntries(TOKEN_CLASSES.map((name, i) => [name, c[i]])) as Coefficients;
}

function estimate(counts: TokenClassCounts, coefficients: Coefficients): number {
  let sum = 0;
  for (const name of TOKEN_CLASSES) sum += coefficients[name] * counts[name];
  return sum;
}

function report(title: string, rows: Row[], coefficients: Coefficients): void {
  const errors = rows.map((r) => (estimate(r.counts, coefficients) - r.tokens) / r.tokens);
  const rms = Math.sqrt(errors.reduce((s, e) => s + e * e, 0) / errors.length);
  const worst = Math.max(...errors.map(Math.abs));
  console.log(`${title}: ${rows.length} samples, rms ${pct(rms)}, worst ${pct(worst)}`);
  rows.forEach((r, i) => {
    if (Math.abs(errors[i]) >= 0.05) console.log(`  ${r.id.padEnd(34)} ${pct(errors[i], true)}`);
  });
}

function pct(x: number, signed = false): string {
  return `${signed && x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}%`;
}

if (import.meta.main) {
  const corpus = loadTokenCorpus();
  const fitted = corpus.filter((s) => !HOLDOUT.has(s.id));
  const chunkRows = fitted.flatMap((s) => chunks(s.text).map((text) => row(s.id, text)));
  const raw = fitCoefficients(chunkRows);
  const rounded = Object.fromEntries(
    TOKEN_CLASSES.map((name) => [name, Math.round(raw[name] * 1000) / 1000]),
  ) as Coefficients;
  console.log(`Fitted on ${chunkRows.length} chunks of ${fitted.length} samples.\n`);
  console.log("const COEFFICIENTS: Readonly<Record<keyof TokenClassCounts, number>> = {");
  for (const name of TOKEN_CLASSES) console.log(`  ${name}: ${rounded[name]},`);
  console.log("};\n");
  report("fitted samples", fitted.map((s) => row(s.id, s.text)), rounded);
  const heldOut = corpus.filter((s) => HOLDOUT.has(s.id));
  report("held-out samples", heldOut.map((s) => row(s.id, s.text)), rounded);
  const errors = leaveOneOutErrors(corpus);
  const rms = Math.sqrt(errors.reduce((s, e) => s + e.error * e.error, 0) / errors.length);
  console.log(`leave one sample out: rms ${pct(rms)}, worst ${pct(Math.abs(errors[0].error))}`);
  for (const e of errors.slice(0, 6)) console.log(`  ${e.id.padEnd(34)} ${pct(e.error, true)}`);
}

/**
 * Refits once per sample on the chunks of all the other samples (held-out ones included) and
 * returns how far off each left-out sample is, worst first: the error to expect on text unlike
 * the rest of the corpus.
 */
export function leaveOneOutErrors(corpus: TokenSample[]): { id: string; error: number }[] {
  const all = corpus.flatMap((s) => chunks(s.text).map((text) => row(s.id, text)));
  return corpus.map((s) => {
    const coefficients = fitCoefficients(all.filter((r) => r.id !== s.id));
    const whole = row(s.id, s.text);
    return {
      id: s.id,
      error: (estimate(whole.counts, coefficients) - whole.tokens) / whole.tokens,
    };
  }).sort((a, b) => Math.abs(b.error) - Math.abs(a.error));
}
