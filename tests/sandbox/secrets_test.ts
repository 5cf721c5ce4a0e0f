import assert from "node:assert/strict";
import {
  createKnownValueStreamMasker,
  createStreamMasker,
  lazyKeyMasker,
  MIN_SECRET_LENGTH,
  SecretMasker,
} from "../../src/sandbox/secrets.ts";

// Fake keys with the real shapes; none of them is valid anywhere.
const OPENAI = "sk-proj-Xy7Qw2Er5Ty8Ui1Op4As6Df9Gh0Jk3Lz_aB-cD";
const OPENAI_LEGACY = "sk-" + "T3BlbkFJ".repeat(6);
const ANTHROPIC = "sk-ant-api03-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0-_Uv";
const GITHUB = "ghp_" + "a1B2c3D4e5F6".repeat(3);
const GITHUB_PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz";
const AWS_ID = "AKIAIOSFODNN7EXAMPLE";
const AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp";
const GOOGLE = "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW";
const JWT =
  "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0TH";
const PEM = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n" +
  "AAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----";

const GITLAB = "glpat-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn";
const HUGGINGFACE = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567";
const NPM = "npm_" + "a1B2c3D4e5F6g7H8".repeat(2) + "i9J0";
const STRIPE = "sk_live_" + "51HAbCdEfGhIjKlMnOp";
const SENDGRID = "SG." + "AbCdEfGhIjKlMnOpQrStUv" + "." +
  "wXyZ0123456789AbCdEfGhIjKlMnOpQrStUvWxYz012";
const GROQ = "gsk_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMn";
const PGP = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF4AbCdEfGhIj\n=AbCd\n" +
  "-----END PGP PRIVATE KEY BLOCK-----";

const masker = new SecretMasker();

Deno.test("SecretMasker.mask() replaces each key format with its labelled marker", () => {
  const cases: [string, string][] = [
    [`key ${OPENAI} end`, "key [REDACTED:openai-key] end"],
    [`OPENAI=${OPENAI_LEGACY}`, "OPENAI=[REDACTED:openai-key]"],
    [`"${ANTHROPIC}"`, `"[REDACTED:anthropic-key]"`],
    [
      `remote: https://x:${GITHUB}@github.com`,
      "remote: https://x:[REDACTED:url-password]@github.com",
    ],
    [GITHUB_PAT, "[REDACTED:github-token]"],
    [`id ${AWS_ID}.`, "id [REDACTED:aws-access-key]."],
    [`aws_secret_access_key = ${AWS_SECRET}`, "aws_secret_access_key = [REDACTED:aws-secret-key]"],
    [`AWS_SECRET_ACCESS_KEY="${AWS_SECRET}"`, `AWS_SECRET_ACCESS_KEY="[REDACTED:aws-secret-key]"`],
    [`slack ${SLACK}`, "slack [REDACTED:slack-token]"],
    [`key=${GOOGLE}&q=1`, "key=[REDACTED:google-api-key]&q=1"],
    [`cookie: ${JWT};`, "cookie: [REDACTED:jwt];"],
    [`a\n${PEM}\nb`, "a\n[REDACTED:private-key]\nb"],
    [PEM.slice(0, 80), "[REDACTED:private-key]"],
    ["Authorization: Bearer abc123def456ghi", "Authorization: Bearer [REDACTED:bearer-token]"],
    [
      "-H 'Authorization: Basic dXNlcjpwYXNzd29yZA=='",
      "-H 'Authorization: Basic [REDACTED:basic-auth]'",
    ],
    [`api_key = "abcdefghij"`, `api_key = "[REDACTED:secret]"`],
    ["GITHUB_TOKEN=abc123def456", "GITHUB_TOKEN=[REDACTED:secret]"],
    [`{"password":"hunter2hunter2"}`, `{"password":"[REDACTED:secret]"}`],
    [`clientSecret: 'q9w8e7r6t5'`, `clientSecret: '[REDACTED:secret]'`],
    [`token := "abcdefghijk"`, `token := "[REDACTED:secret]"`],
    [
      "https://x.test/?access_token=9f8e7d6c5b4a&x=1",
      "https://x.test/?access_token=[REDACTED:secret]&x=1",
    ],
    [
      `url = https://oauth2:${GITLAB}@gitlab.com/`,
      "url = https://oauth2:[REDACTED:url-password]@gitlab.com/",
    ],
    [`HF ${HUGGINGFACE}`, "HF [REDACTED:huggingface-token]"],
    [`publish with ${NPM} now`, "publish with [REDACTED:npm-token] now"],
    [`stripe ${STRIPE}.`, "stripe [REDACTED:stripe-key]."],
    [`key ${SENDGRID}`, "key [REDACTED:sendgrid-key]"],
    [`${GROQ}`, "[REDACTED:groq-key]"],
    [`a\n${PGP}\nb`, "a\n[REDACTED:private-key]\nb"],
    ["Authorization: token 0a1b2c3d4e5f6a7b8c9d", "Authorization: token [REDACTED:token-auth]"],
    [
      "DATABASE_URL=postgres://app:s3cr3t-Pa55@db.internal:5432/app",
      "DATABASE_URL=postgres://app:[REDACTED:url-password]@db.internal:5432/app",
    ],
    [
      "git clone https://me:hunter2@host/x.git",
      "git clone https://me:[REDACTED:url-password]@host/x.git",
    ],
  ];
  for (const [input, expected] of cases) assert.equal(masker.mask(input), expected, input);
});

Deno.test("SecretMasker.mask() leaves ordinary code and prose alone", () => {
  const text = [
    "const token = getToken();",
    "password: string;",
    "apiKey?: string | undefined",
    "secret: Promise<string>",
    "token: this.options.token,",
    'if (token === "abcdefghijk") return;',
    "password=${PASSWORD}",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "max_tokens: 40960000",
    "tokenizer = createTokenizer(options)",
    "const secretKey = await deriveKey(password, salt);",
    "risk-assessment-framework-document-v2 and sk-learn-preprocessing-pipeline",
    "Bearer authentication is described in RFC 6750",
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
    "AKIAIOSFODNN7EXAMPLEX is too long, akiaiosfodnn7example is lower case",
    "https://example.com:8080/path?a=b@c and http://[::1]:3000/ and user@host:22",
    "git@github.com:org/repo.git and ssh://git@host:22/x and mailto:a@b.c",
    "hf_hub_download(), npm_config_cache, sk_live_ in prose, gsk_ and glpat- alone",
    "time 10:30:45@UTC, C:\\Users\\me@corp",
  ].join("\n");
  assert.equal(masker.mask(text), text);
});

Deno.test("SecretMasker.mask() replaces known values and ignores short ones", () => {
  const known = new SecretMasker(["correct horse battery", "p@ss(w)ord.*", "short"]);
  assert.equal(
    known.mask("say correct horse battery, then p@ss(w)ord.* twice: p@ss(w)ord.*; short"),
    "say [REDACTED], then [REDACTED] twice: [REDACTED]; short",
  );
  // A known value inside a bare `password=` value that does not look random is still masked.
  assert.equal(
    new SecretMasker(["abcdefghij"]).mask("password=abcdefghij"),
    "password=[REDACTED]",
  );
});

Deno.test("SecretMasker.mask() masks a known value written percent-encoded in a URL", () => {
  const key = "sk-proj-SECRETKEY0123456789abcdefABCDEF";
  const masker = new SecretMasker([key]);
  const encode = (text: string, every: number) =>
    [...text].map((c, i) =>
      i % every === 0 ? `%${c.charCodeAt(0).toString(16).padStart(2, "0")}` : c
    ).join("");
  for (const every of [1, 2, 5]) {
    const url = `http://pub.example/?q=docs&k=${encode(key, every)}&x=1`;
    const masked = masker.mask(url);
    assert.ok(!decodeURIComponent(masked.replace("[REDACTED]", "")).includes(key), masked);
    assert.ok(masked.startsWith("http://pub.example/?q=docs&"), masked);
    assert.ok(masked.endsWith("&x=1"), masked);
  }
  // Upper-case hex, and JSON of a tool call.
  const upper = [...key].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join("");
  assert.ok(!masker.mask(JSON.stringify({ url: `https://e.example/${upper}` })).includes(upper));
  // Percent-encoded text without the key stays as it is.
  const plain = "https://e.example/a%20b?q=%E2%9C%93&r=100%";
  assert.equal(masker.mask(plain), plain);
});

Deno.test("SecretMasker.mask() masks a known value of exactly the minimum length", () => {
  const value = "Zq8#Lm2!";
  assert.equal(value.length, MIN_SECRET_LENGTH);
  const known = new SecretMasker([value, value.slice(1)]);
  // Alone (the whole text is that short) and inside other text.
  assert.equal(known.mask(value), "[REDACTED]");
  assert.equal(known.mask(`value ${value} end`), "value [REDACTED] end");
  // One character shorter is below the minimum and stays.
  assert.equal(known.mask(`${value.slice(1)} alone`), `${value.slice(1)} alone`);
  const stream = createStreamMasker(known);
  assert.equal(stream.push(value) + stream.flush(), "[REDACTED]");
});

Deno.test("SecretMasker.mask() handles a megabyte without secrets in one pass", () => {
  // Measured here: about 5 ms for 1 MB of code with 3 known values (no timed assertion).
  const text = "const x = foo(bar, baz); // token and secret words, risk-free\n".repeat(17000);
  const known = new SecretMasker(["value-one-1234", "value-two-5678", "value-three-9012"]);
  assert.equal(known.mask(text), text);
  assert.equal(known.mask(text + "value-two-5678"), text + "[REDACTED]");
});

Deno.test("SecretMasker.mask() stays linear on crafted repetitive input", () => {
  const known = new SecretMasker(["abcdefghij"]);
  for (
    const unit of [
      "password=",
      "sk-",
      "eyJ",
      "token ",
      "Bearer x",
      "-----BEGIN RSA PRIVATE KEY-----",
    ]
  ) {
    const text = unit.repeat(100_000);
    assert.equal(known.mask(text).length > 0, true, unit);
  }
  assert.equal(known.mask("password=".repeat(100_000)), "password=".repeat(100_000));
});

Deno.test("SecretMasker.carriesKnownValue() finds half of a known key in pieces, whatever the case and separators", () => {
  const key = "Zq7Wm2Kp9Xv4Rt8Ly3Nb";
  const masker = new SecretMasker([key, "short"]);
  for (
    const text of [
      `https://e.example/?k=${key}`,
      "https://zq7wm2kp9xv4rt8ly3nb.e.example/",
      "https://e.example/?a=Zq7Wm2Kp9X&b=v4Rt8Ly3Nb",
      "https://zq7wm2kp9x.v4rt8ly3nb.e.example/",
      "https://e.example/Zq7Wm2Kp9X\0v4Rt8Ly3Nb",
      // Half of it is enough: the other half in a second request is not caught.
      "https://e.example/?part=Zq7Wm2Kp9X",
      "https://e.example/?part=\uff3a\uff51\uff17\uff37\uff4d\uff12\uff2b\uff50\uff19\uff38",
    ]
  ) {
    assert.ok(masker.carriesKnownValue(text), text);
  }
  for (
    const text of [
      "https://docs.deno.com/api/deno/~/Deno.Command?x=1",
      // Pieces shorter than 8 characters, and under half of the key.
      "https://e.example/?a=Zq7Wm2K&b=p9Xv4Rt",
      "https://e.example/?a=Zq7Wm2Kp9",
      "https://e.example/short",
    ]
  ) {
    assert.ok(!masker.carriesKnownValue(text), text);
  }
  assert.ok(!new SecretMasker().carriesKnownValue(`https://e.example/?k=${key}`));
});

Deno.test("SecretMasker.maskDeep() masks nested strings and values under secret keys", () => {
  const known = new SecretMasker(["my-config-api-key-1"]);
  const args = {
    command: `curl -H "Authorization: Bearer ${OPENAI}" https://x.test`,
    nested: { list: ["ok", `key ${GITHUB}`, 3, null, true], password: "hunter2" },
    headers: { "X-Api-Key": "tiny", authorization: "Basic b64" },
    env: ["A=my-config-api-key-1"],
    max_tokens: "12345678",
    count: 7,
  };
  assert.deepEqual(known.maskDeep(args), {
    command: 'curl -H "Authorization: Bearer [REDACTED:bearer-token]" https://x.test',
    nested: { list: ["ok", "key [REDACTED:github-token]", 3, null, true], password: "[REDACTED]" },
    headers: { "X-Api-Key": "[REDACTED]", authorization: "[REDACTED]" },
    env: ["A=[REDACTED]"],
    max_tokens: "12345678",
    count: 7,
  });
  assert.equal(args.nested.password, "hunter2", "the input is not changed");
});

Deno.test("SecretMasker.maskDeep() masks a value nested 100,000 deep without overflowing", () => {
  const known = new SecretMasker(["my-config-api-key-1"]);
  const depth = 100_000;
  const text = '{"a":'.repeat(depth) + '{"token":"t0k","x":["my-config-api-key-1"]}' +
    "}".repeat(depth);
  const masked = JSON.stringify(known.maskDeep(JSON.parse(text)));
  assert.equal(
    masked,
    '{"a":'.repeat(depth) + '{"token":"[REDACTED]","x":["[REDACTED]"]}' + "}".repeat(depth),
  );
});

const STREAM_TEXT = `start ${OPENAI} and my-known-secret-value\n` +
  `Authorization: Bearer abc123def456ghi\n${PEM}\nline with ${JWT} end\npassword="hunter2hunter2"`;

Deno.test("createStreamMasker() masks a secret split at any point between two chunks", () => {
  const known = new SecretMasker(["my-known-secret-value"]);
  const expected = known.mask(STREAM_TEXT);
  assert.ok(!expected.includes("hunter2") && expected.includes("[REDACTED:private-key]"));
  for (let i = 0; i <= STREAM_TEXT.length; i++) {
    const stream = createStreamMasker(known);
    const out = stream.push(STREAM_TEXT.slice(0, i)) + stream.push(STREAM_TEXT.slice(i)) +
      stream.flush();
    assert.equal(out, expected, `split at ${i}`);
  }
});

Deno.test("createStreamMasker() masks output arriving a character at a time", () => {
  const known = new SecretMasker(["my-known-secret-value"]);
  const stream = createStreamMasker(known);
  const pieces = [...STREAM_TEXT].map((char) => stream.push(char));
  assert.equal(pieces.join("") + stream.flush(), known.mask(STREAM_TEXT));
  assert.ok(pieces.some((piece) => piece.length > 0), "complete lines are passed on early");
});

Deno.test("createStreamMasker() cuts a very long line without splitting a key", () => {
  const line = `${"x,".repeat(10000)}${GITHUB},${"y,".repeat(10000)}`;
  for (const at of [20000 - 10, 20000 + 5, 20000 + 30]) {
    const stream = createStreamMasker(masker);
    const out = stream.push(line.slice(0, at)) + stream.push(line.slice(at)) + stream.flush();
    assert.equal(out, masker.mask(line), `split at ${at}`);
    assert.ok(!out.includes(GITHUB.slice(4, 20)));
  }
});

Deno.test("createStreamMasker() drops an endless private key block up to its end", () => {
  const stream = createStreamMasker(masker);
  let out = stream.push("before\n-----BEGIN RSA PRIVATE KEY-----\n");
  const body = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=\n".repeat(100);
  for (let i = 0; i < 30; i++) out += stream.push(body);
  out += stream.push("-----END RSA PRI") + stream.push("VATE KEY-----\nafter\n") + stream.flush();
  assert.equal(out, "before\n[REDACTED:private-key]\nafter\n");
});

Deno.test("createStreamMasker() drops an endless PGP private key block up to its end, and goes on after it", () => {
  const stream = createStreamMasker(masker);
  let out = stream.push("before\n-----BEGIN PGP PRIVATE KEY BLOCK-----\n");
  const body = "lQOYBF4AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ABCDEFGH\n".repeat(100);
  for (let i = 0; i < 30; i++) out += stream.push(body);
  out += stream.push("-----END PGP PRIVATE KEY BL") +
    stream.push("OCK-----\nafter\n") + stream.flush();
  assert.equal(out, "before\n[REDACTED:private-key]\nafter\n");
});

Deno.test("createKnownValueStreamMasker() masks a known key split anywhere across three pieces, and holds back nothing else", () => {
  const key = "sk-live-KNOWNSTREAM-4f9a";
  const other = "tok_ABABABAB_abab";
  const masker = new SecretMasker([key, other]);
  const text = `first ${key} then s-k sk- sk-live tok_ABAB and ${other}${key}. end`;
  const expected = masker.maskKnown(text);
  assert.equal(expected.includes(key) || expected.includes(other), false);
  for (let a = 0; a <= text.length; a++) {
    for (let b = a; b <= text.length; b += 3) {
      const stream = createKnownValueStreamMasker(masker);
      const out = [text.slice(0, a), text.slice(a, b), text.slice(b)].map((piece) =>
        stream.push(piece)
      );
      const all = out.join("") + stream.flush();
      assert.equal(all, expected, `cut at ${a} and ${b}`);
      // What was passed on before the end never holds a key, nor waits on more than a key's start.
      assert.ok(!out.join("").includes(key));
    }
  }
  // A piece that ends in no key's beginning is passed on whole, at once.
  const stream = createKnownValueStreamMasker(masker);
  assert.equal(stream.push("plain words, "), "plain words, ");
  assert.equal(stream.push("then sk"), "then ");
  assert.equal(stream.push("y"), "sky");
});

Deno.test("createKnownValueStreamMasker() replaces most of a key left at the end, and keeps a short start", () => {
  const key = "sk-live-KNOWNSTREAM-4f9a";
  const masker = new SecretMasker([key]);
  const long = createKnownValueStreamMasker(masker);
  assert.equal(long.push(`the key: ${key.slice(0, -1)}`), "the key: ");
  assert.equal(long.flush(), "[REDACTED]");
  const short = createKnownValueStreamMasker(masker);
  assert.equal(short.push("ask sk-l"), "ask ");
  assert.equal(short.flush(), "sk-l");
});

/** A small seeded generator, so a failing stream can be made again. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

Deno.test("createStreamMasker() gives what masking the whole output gives, however it arrives", () => {
  const known = new SecretMasker(["my-known-secret-value"]);
  const secrets = [
    OPENAI,
    OPENAI_LEGACY,
    ANTHROPIC,
    GITHUB,
    GITHUB_PAT,
    AWS_ID,
    `aws_secret_access_key = ${AWS_SECRET}`,
    SLACK,
    GOOGLE,
    JWT,
    PEM,
    "Authorization: Bearer abc123def456ghi",
    'password="hunter2hunter2"',
    "my-known-secret-value",
    GITLAB,
    HUGGINGFACE,
    SENDGRID,
    PGP,
    "Authorization: token 0a1b2c3d4e5f6a7b8c9d",
    "postgres://app:s3cr3t-Pa55@db",
  ];
  const filler = ["word ", "x", "\n", ", ", "(", "|", " = ", "sk-", "token", "AKIA"];
  for (let seed = 1; seed <= 300; seed++) {
    const next = seeded(seed);
    let text = "";
    for (let part = 0; part < 60; part++) {
      const roll = next();
      if (roll < 0.15) text += secrets[Math.floor(next() * secrets.length)];
      // Long runs without a line end make the masker cut inside a line.
      else if (roll < 0.2) text += "y".repeat(Math.floor(next() * 12_000));
      else text += filler[Math.floor(next() * filler.length)];
    }
    const stream = createStreamMasker(known);
    let out = "";
    for (let at = 0; at < text.length;) {
      const size = 1 + Math.floor(next() * (next() < 0.5 ? 40 : 9000));
      out += stream.push(text.slice(at, at + size));
      at += size;
    }
    out += stream.flush();
    assert.equal(out, known.mask(text), `seed ${seed}`);
  }
});

Deno.test("SecretMasker.mask() masks a secret-shaped run of megabytes to its first 64 KiB, and does not throw", () => {
  const masker = new SecretMasker();
  // One match of 5.5 million characters overflowed V8's backtracking stack.
  for (
    const [text, label] of [
      ["password=" + "a1".repeat(3_000_000), "secret"],
      ["ghp_" + "a".repeat(6_000_000), "github-token"],
      ["Bearer " + "a1".repeat(3_000_000), "bearer-token"],
    ]
  ) {
    const masked = masker.mask(text);
    assert.ok(masked.includes(`[REDACTED:${label}]`), masked.slice(0, 80));
    // The first 64 KiB of the run are the secret; past them it is not looked at.
    const cut = text.length - masked.length + `[REDACTED:${label}]`.length;
    assert.ok(cut >= 65536 && cut <= 65536 + 4, String(cut));
  }
});

Deno.test("createStreamMasker() lets a secret-shaped run of megabytes go at the line cut, masked, instead of holding it", () => {
  const stream = createStreamMasker(new SecretMasker());
  let out = stream.push("printf password=");
  let most = 0;
  const piece = "a1".repeat(32768);
  for (let i = 0; i < 190; i++) {
    const passed = stream.push(piece);
    out += passed;
    // What is held stays bounded: each piece lets about as much go as it brought.
    if (i > 4) most = Math.max(most, (i + 1) * piece.length + 16 - out.length);
  }
  out += stream.flush();
  assert.ok(out.startsWith("printf password=[REDACTED:secret]a1a1"), out.slice(0, 60));
  assert.ok(most < 200_000, `held ${most} characters`);
});

Deno.test("lazyKeyMasker() reads the config at each use and masks the keys a /login brought", () => {
  let config: { apiKey?: string; apiKeys?: Record<string, string> } = {
    apiKey: "local-key-first-1a2b",
  };
  let reads = 0;
  const mask = lazyKeyMasker(() => (reads++, config));
  assert.equal(reads, 0, "nothing is made before the first use");
  assert.equal(
    mask(`a local-key-first-1a2b and ${OPENAI}`),
    "a [REDACTED] and [REDACTED:openai-key]",
  );
  config = { apiKey: "local-key-second-3c4d", apiKeys: { search: "search-key-5e6f7a8b" } };
  assert.equal(
    mask("local-key-second-3c4d search-key-5e6f7a8b"),
    "[REDACTED] [REDACTED]",
  );
  assert.equal(mask("local-key-first-1a2b"), "local-key-first-1a2b", "the old key is not held");
  assert.equal(reads, 3);
});

Deno.test("SecretMasker masks a key holding a line break however the break is shown", () => {
  const key = "sk-live-9f8e7d6c5b4a\nQz7Xw3Vb2Nm1";
  const masker = new SecretMasker([key]);
  for (
    const shown of [
      key,
      key.replace("\n", " "),
      key.replace("\n", "\\n"),
      key.replace("\n", "␊"),
      `Invalid header value: "Bearer ${key.replace("\n", " ")}"`,
    ]
  ) {
    const masked = masker.mask(`failed: ${shown} (retrying)`);
    assert.ok(!masked.includes("9f8e7d6c5b4a"), masked);
    assert.ok(!masked.includes("Qz7Xw3Vb2Nm1"), masked);
  }
});
