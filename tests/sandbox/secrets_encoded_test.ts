/**
 * A hostile model (or a repository's script) that reaches a known key tries to carry it out of a
 * command's output in another form: another case, an encoding one short command makes, broken
 * by line ends or invisible characters, or only a part of it.
 */
import assert, { equal } from "node:assert/strict";
import {
  createKnownValueStreamMasker,
  createStreamMasker,
  SecretMasker,
} from "../../src/sandbox/secrets.ts";

// Fake keys; none of them is valid anywhere.
const KEY = "sk-ant-api03-Zq7Wm2Kp9Xv4Rt8Ly3Nb-Hd6Fs1Gc5Jw0Qe2";
const OTHER = "sk-ant-api03-Pl4Ok8Ij2Uh6Yg1Tf5Rd9Es3Wa7Qz0Xc4";
const masker = new SecretMasker([KEY]);

const bytes = (text: string) => new TextEncoder().encode(text);
const hex = (text: string) =>
  Array.from(bytes(text), (b) => b.toString(16).padStart(2, "0")).join("");
/** GNU `base64` of `text`: wrapped at 76 columns. */
const base64 = (text: string) => bytes(text).toBase64().replace(/.{76}/g, "$&\n");

/** The key as it is, reversed, in hex, and in base64 and base64url at each byte alignment. */
const FORMS = [KEY, [...KEY].reverse().join(""), hex(KEY)].concat(
  [0, 1, 2].flatMap((shift) => {
    const whole = bytes(KEY).subarray(shift, shift + Math.floor((KEY.length - shift) / 3) * 3);
    return [whole.toBase64(), whole.toBase64({ alphabet: "base64url" })];
  }),
);

/** No 16 characters of the key, in any of its forms, are left in `text`. */
function assertNoKey(text: string, what: string): void {
  const flat = text.replace(/[\s\u00ad\u200b-\u200d\u2060\ufeff]/g, "").toLowerCase();
  for (const form of FORMS) {
    const lower = form.toLowerCase();
    for (let at = 0; at + 16 <= lower.length; at++) {
      assert.ok(!flat.includes(lower.slice(at, at + 16)), `${what}: ${text}`);
    }
  }
}

Deno.test("SecretMasker.mask() masks a known key in another case, reversed, in hex and in base64 at every alignment", () => {
  const file = (pad: string) => `API_KEY=${pad}${KEY}\nDEBUG=1\n`;
  const outputs: Record<string, string> = {
    "upper-cased": KEY.toUpperCase(),
    "lower-cased": KEY.toLowerCase(),
    reversed: [...KEY].reverse().join(""),
    "xxd -p": hex(file("")).replace(/.{60}/g, "$&\n"),
    "hex, upper-case": hex(KEY).toUpperCase(),
    "od -An -tx1": [...bytes(KEY)].map((b) => b.toString(16).padStart(2, "0")).join(" "),
  };
  for (const pad of ["", "x", "xy", "xyz"]) {
    outputs[`base64, ${pad.length} before`] = base64(file(pad));
    outputs[`base64url, ${pad.length} before`] = bytes(file(pad)).toBase64({
      alphabet: "base64url",
    });
  }
  for (const [what, output] of Object.entries(outputs)) {
    const masked = masker.mask(`output:\n${output}\nend`);
    assert.ok(masked.includes("[REDACTED]"), `${what}: ${masked}`);
    assertNoKey(masked, what);
    assert.ok(masked.startsWith("output:\n") && masked.endsWith("\nend"), what);
  }
});

Deno.test("SecretMasker.mask() masks a known key broken by line ends, spaces or invisible characters", () => {
  const broken = {
    "fold -w 20": KEY.replace(/.{20}/g, "$&\n"),
    "CRLF halves": `${KEY.slice(0, 25)}\r\n${KEY.slice(25)}`,
    "zero-width spaces": [...KEY].join("\u200b"),
    "soft hyphens and joiners": [...KEY].join("\u00ad\u200d"),
    "spaced out": [...KEY].join(" "),
  };
  for (const [what, output] of Object.entries(broken)) {
    const masked = masker.mask(`before ${output} after`);
    assert.equal(masked, "before [REDACTED] after", what);
  }
});

Deno.test("SecretMasker.mask() masks a run of 16 or more characters of a known key, and not a shared prefix", () => {
  for (
    const [what, part] of [
      ["prefix", KEY.slice(0, 16)],
      ["middle", KEY.slice(13, 33)],
      ["end", KEY.slice(-17)],
      ["middle, upper-cased", KEY.slice(20, 40).toUpperCase()],
    ]
  ) {
    const masked = masker.mask(`echo ${part} | cut`);
    assert.equal(masked, "echo [REDACTED] | cut", what);
  }
  // Another key of the same format shares 13 characters with it: it stays (the formats are
  // not asked here: a masker of known values alone).
  const text = `fifteen: ${KEY.slice(0, 15)}; another key's start: ${OTHER.slice(0, 20)}`;
  assert.equal(masker.maskKnown(text), text);
  assert.equal(masker.mask(`short ${KEY.slice(3, 18)} piece`), `short ${KEY.slice(3, 18)} piece`);
});

Deno.test("SecretMasker.mask() masks a known path or address whole, not ordinary output that shares a run of it", () => {
  // An MCP server's secret-named env entry may hold a path or a URL (PRIVATE_DATA_DIR, a DSN).
  const path = "/home/me/projects/private-repo";
  const dsn = "postgres://localhost:5432/app?sslmode=disable";
  const known = new SecretMasker([path, dsn, KEY]);
  const ordinary = "cd /home/me/projects/other && psql postgres://localhost:5432/other";
  equal(known.mask(ordinary), ordinary);
  equal(known.mask(`at ${path} and ${dsn}.`), "at [REDACTED] and [REDACTED].");
  // A key's run is still masked beside them.
  equal(known.mask(`echo ${KEY.slice(0, 16)}`), "echo [REDACTED]");
});

Deno.test("SecretMasker.mask() masks a known value with quotes and backslashes as JSON writes it", () => {
  const value = 'pa"ss\\w0rd-Q7x';
  const known = new SecretMasker([value]);
  equal(
    known.mask(JSON.stringify({ password: value, user: "me" })),
    '{"password":"[REDACTED]","user":"me"}',
  );
});

Deno.test("SecretMasker.mask() does not mask short values or ordinary text for a long known key", () => {
  const known = new SecretMasker(["a", "ab", KEY]);
  const text = "a cat and a bat: abacab, sk-ant-api03-Example, 736b2d616e74";
  assert.equal(known.mask(text), text);
});

Deno.test("createStreamMasker() masks a known key split across two lines and two pieces of output", () => {
  const outputs = [
    `line one\n${KEY.slice(0, 1)}\n${KEY.slice(1)}\nline three\n`,
    `line one\n${KEY.slice(0, 30)}\n${KEY.slice(30)}\nline three\n`,
    `id: ${base64(`API_KEY=${KEY}\n`.repeat(3))}\nend\n`,
    `dump: ${hex(KEY).replace(/.{30}/g, "$&\n")}\nend\n`,
    `GET https://e.example/?k=${[...KEY].map((c) => `%${hex(c)}`).join("")} 200\nend\n`,
  ];
  for (const output of outputs) {
    const expected = masker.mask(output);
    assertNoKey(expected, "whole");
    for (let at = 0; at <= output.length; at++) {
      const stream = createStreamMasker(masker);
      const out = stream.push(output.slice(0, at)) + stream.push(output.slice(at)) +
        stream.flush();
      // Past a line's end, an end of under 4 characters of a form is not held (see the next
      // test): the screen may show those few characters, never a key's run.
      if (out !== expected) assertNoKey(out, `split at ${at}`);
      assert.ok(out.endsWith(expected.slice(expected.lastIndexOf("\n", expected.length - 2))));
    }
  }
});

Deno.test("createStreamMasker() passes a whole line on at once when its last characters only might start a key", () => {
  // KEY's forms start with `s`, `7`, `c`, its last character...: a line ending in one of them
  // was held, so a command's output showed one line short until its next output.
  const stream = createStreamMasker(masker);
  equal(stream.push("building sources\n"), "building sources\n");
  equal(stream.push("wrote 7\n"), "wrote 7\n");
  // Four characters of a form past a line's end still wait for the rest.
  equal(stream.push(`dump: ${KEY.slice(0, 6)}\n`), "dump: ");
  equal(stream.push(`${KEY.slice(6)}\ndone\n`), "[REDACTED]\ndone\n");
});

Deno.test("SecretMasker.carriesKnownValue() finds a known key in base64, hex or reversed in a URL", () => {
  for (
    const url of [
      `https://e.example/?d=${encodeURIComponent(btoa(KEY))}`,
      `https://e.example/?d=${bytes(`x${KEY}`).toBase64({ alphabet: "base64url" })}`,
      `https://${hex(KEY).slice(0, 60)}.${hex(KEY).slice(60)}.e.example/`,
      `https://e.example/${[...KEY].reverse().join("")}`,
    ]
  ) {
    assert.ok(masker.carriesKnownValue(url), url);
  }
  assert.ok(!masker.carriesKnownValue(`https://e.example/?d=${btoa(OTHER)}`));
});

Deno.test("SecretMasker.mask() stays linear on output crafted from parts of a known key", () => {
  const units = [
    [...KEY.slice(0, 40)].join("\u200b") + " ",
    `${KEY.slice(0, 30)}\n`,
    KEY.slice(0, 15),
    hex(KEY).slice(0, 80),
  ];
  for (const unit of units) {
    const text = unit.repeat(Math.ceil(1_000_000 / unit.length));
    const started = performance.now();
    masker.mask(text);
    // Quadratic work on a megabyte would take minutes; linear takes well under a second.
    assert.ok(performance.now() - started < 5000, JSON.stringify(unit.slice(0, 12)));
  }
});

Deno.test("createKnownValueStreamMasker() masks a known key the model streams upper-cased, split anywhere", () => {
  const text = `the key is ${KEY.toUpperCase()} as asked`;
  const expected = masker.maskKnown(text);
  equal(expected, "the key is [REDACTED] as asked");
  for (let at = 0; at <= text.length; at++) {
    const stream = createKnownValueStreamMasker(masker);
    const first = stream.push(text.slice(0, at));
    const out = first + stream.push(text.slice(at)) + stream.flush();
    equal(out, expected, `split at ${at}`);
    equal(first.includes(KEY.toUpperCase().slice(0, 4)), false, `split at ${at}: ${first}`);
  }
});
