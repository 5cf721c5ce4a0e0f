/**
 * The web tools inside the permission model: web_fetch reaches the network only under a
 * profile with the whole network, or when review approves the exact URL (ASK: the person;
 * AUTO: the reviewer; BYPASS: never). Hosts granted to shell commands do not open it, and a
 * host approved for web_fetch does not open the network to commands. Real gate and sandbox;
 * the web_fetch transport is the guard with its test injection (127.0.0.1 reachable).
 */
import { deepEqual, doesNotMatch, equal, match, ok } from "node:assert/strict";
import { guardedRequest } from "../../src/tools/web_request.ts";
import type { BuiltinToolOptions } from "../../src/tools/mod.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { expectError, SECRET, withGate } from "./_gate_box.ts";

const BUILTINS: BuiltinToolOptions = {
  webFetch: {
    transport: (request) =>
      guardedRequest(request, { testAllowAddress: (address) => address === "127.0.0.1" }),
  },
};

async function withPage(fn: (url: string, hits: () => number) => Promise<void>): Promise<void> {
  let hits = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    hits++;
    return new Response("release notes\n", { headers: { "content-type": "text/plain" } });
  });
  try {
    await fn(`http://127.0.0.1:${server.addr.port}/notes?v=2`, () => hits);
  } finally {
    await server.shutdown();
  }
}

Deno.test("web_fetch under :workspace in ASK shows the person the exact URL and fetches only when allowed", async () => {
  await withPage(async (url, hits) => {
    await withGate({ answers: ["deny", "once"], builtins: BUILTINS }, async (box) => {
      expectError(await box.call("web_fetch", { url }), "POLICY_DENIED", /./);
      equal(hits(), 0);
      const obs = await box.call("web_fetch", { url });
      equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
      match(obs.status === "SUCCEEDED" ? obs.output : "", /release notes/);
      equal(hits(), 1);
      deepEqual(box.asked, [`web_fetch GET ${url}`, `web_fetch GET ${url}`]);
      const request = box.events.find((event) => event.type === "permission_request");
      match(
        JSON.stringify(request),
        /reaches the network \(127\.0\.0\.1:\d+\), which the sandbox profile \\":workspace\\" does not give/,
      );
      const record = box.audit.at(-1)!;
      equal(record.network, `GET ${url}`);
      deepEqual(
        record.web && { url: record.web.url, status: record.web.status, bytes: record.web.bytes },
        {
          url,
          status: 200,
          bytes: 14,
        },
      );
      equal(typeof record.web?.ms, "number");
      equal(box.audit[0].decision, "deny");
      equal(box.audit[0].network, `GET ${url}`);
    });
  });
});

Deno.test("web_fetch in ASK without a terminal is denied, saying how to allow web requests", async () => {
  await withPage(async (url, hits) => {
    await withGate({ builtins: BUILTINS }, async (box) => {
      expectError(
        await box.call("web_fetch", { url }),
        "POLICY_DENIED",
        /not interactive.*To allow web requests, run with --profile :external .* or --mode auto/,
      );
      equal(hits(), 0);
    });
  });
});

Deno.test("web_fetch never sends a known secret, even under :external", async () => {
  await withPage(async (url, hits) => {
    await withGate({ answers: [], profile: ":external", builtins: BUILTINS }, async (box) => {
      expectError(
        await box.call("web_fetch", { url: `${url}&leak=${SECRET}` }),
        "POLICY_DENIED",
        /would send a secret \(an API key or token\) to the network/,
      );
      // Split by a tab or a line break (which the URL parser drops), by a NUL or across
      // parameters; percent-escaped (beside a broken escape), twice, upper-cased, in the host.
      const middle = Math.floor(SECRET.length / 2);
      const [head, tail] = [SECRET.slice(0, middle), SECRET.slice(middle)];
      const escape = (text: string) =>
        [...text].map((char) => `%${char.charCodeAt(0).toString(16)}`).join("");
      for (
        const hidden of [
          `${url}&leak=${head}\t${tail}`,
          `${url}&leak=${head}\n${tail}`,
          `${url}&leak=${escape(SECRET)}`,
          `${url}&leak=${escape(SECRET)}&x=%ff`,
          `${url}&a=${head}&b=${tail}`,
          `${url}&leak=${head}%00${tail}`,
          `${url}&leak=${escape(escape(SECRET))}`,
          `${url}&leak=${SECRET.toUpperCase()}`,
          `http://${head}.${tail}.example/`,
        ]
      ) {
        expectError(
          await box.call("web_fetch", { url: hidden }),
          "POLICY_DENIED",
          /would send a secret/,
        );
      }
      equal(hits(), 0);
      deepEqual(box.asked, []);
      ok(!JSON.stringify(box.audit).includes(SECRET), "the audit masks it");
    });
  });
});

Deno.test("web_fetch and web_search never send a known secret in base64, hex or reversed", async () => {
  await withPage(async (url, hits) => {
    const builtins: BuiltinToolOptions = {
      ...BUILTINS,
      webSearch: { providers: [{ name: "exa", key: "k", endpoint: `${new URL(url).origin}/s` }] },
    };
    await withGate({ answers: [], profile: ":external", builtins }, async (box) => {
      const bytes = new TextEncoder().encode(`x${SECRET}`);
      const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
      const carried = [
        encodeURIComponent(bytes.toBase64()),
        bytes.toBase64({ alphabet: "base64url" }),
        hex,
        [...SECRET].reverse().join(""),
      ];
      for (const data of carried) {
        expectError(
          await box.call("web_fetch", { url: `${url}&d=${data}` }),
          "POLICY_DENIED",
          /would send a secret/,
        );
        expectError(
          await box.call("web_search", { query: `docs ${data}` }),
          "POLICY_DENIED",
          /would send a secret/,
        );
      }
      equal(hits(), 0);
      deepEqual(box.asked, []);
    });
  });
});

Deno.test("web_search never sends a known secret in its query, percent-escaped or not", async () => {
  let hits = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    hits++;
    return Response.json({ results: [] });
  });
  const endpoint = `http://127.0.0.1:${server.addr.port}/search`;
  const builtins: BuiltinToolOptions = {
    webSearch: { providers: [{ name: "exa", key: "k", endpoint }] },
  };
  const escape = (text: string) =>
    [...text].map((char) => `%${char.charCodeAt(0).toString(16)}`).join("");
  try {
    await withGate({ answers: [], profile: ":external", builtins }, async (box) => {
      for (const query of [`docs ${SECRET}`, `docs ${escape(SECRET)}`, escape(escape(SECRET))]) {
        expectError(
          await box.call("web_search", { query }),
          "POLICY_DENIED",
          /would send a secret/,
        );
      }
      equal(hits, 0);
      ok(!JSON.stringify(box.audit).includes(SECRET), "the audit masks it");
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("web_fetch in AUTO is decided by the reviewer, who sees the exact URL", async () => {
  await withPage(async (url, hits) => {
    let allow = false;
    await withGate({
      mode: "auto",
      builtins: BUILTINS,
      reviewer: () =>
        Promise.resolve({ decision: allow ? "allow" : "deny", reason: allow ? "docs" : "no" }),
    }, async (box) => {
      expectError(await box.call("web_fetch", { url }), "POLICY_DENIED", /no/);
      equal(hits(), 0);
      allow = true;
      equal((await box.call("web_fetch", { url })).status, "SUCCEEDED");
      equal(hits(), 1);
      deepEqual(box.reviewed, [`web_fetch GET ${url}`, `web_fetch GET ${url}`]);
      equal(box.audit.at(-1)!.decidedBy, "reviewer");
    });
  });
});

Deno.test("web_fetch in AUTO with autoNetwork person or never: the reviewer may not allow it", async () => {
  // What a subagent gets from a parent in ASK (person) or BYPASS (never): a reviewer that
  // allows everything must not take it further than the parent could go.
  await withPage(async (url, hits) => {
    const allowAll = () => Promise.resolve({ decision: "allow" as const, reason: "fine" });
    await withGate({
      mode: "auto",
      autoNetwork: "never",
      reviewer: allowAll,
      answers: ["once"],
      builtins: BUILTINS,
    }, async (box) => {
      const result = await box.call("web_fetch", { url });
      expectError(result, "POLICY_DENIED", /autoNetwork is "never"/);
      // "never" may be the person's own --auto-network: the denial blames no BYPASS run.
      doesNotMatch(JSON.stringify(result), /BYPASS/);
      deepEqual([box.reviewed, box.asked], [[], []]);
    });
    await withGate({
      mode: "auto",
      autoNetwork: "person",
      reviewer: allowAll,
      answers: ["deny", "once"],
      builtins: BUILTINS,
    }, async (box) => {
      expectError(await box.call("web_fetch", { url }), "POLICY_DENIED", /./);
      equal(hits(), 0);
      equal((await box.call("web_fetch", { url })).status, "SUCCEEDED");
      equal(hits(), 1);
      deepEqual(box.reviewed, []);
      deepEqual(box.asked, [`web_fetch GET ${url}`, `web_fetch GET ${url}`]);
    });
    await withGate(
      { mode: "auto", autoNetwork: "person", reviewer: allowAll, builtins: BUILTINS },
      async (box) => {
        // Nobody to ask: denied, never the reviewer's.
        expectError(await box.call("web_fetch", { url }), "POLICY_DENIED", /needs a person/);
        equal(hits(), 1);
      },
    );
  });
});

Deno.test("web_fetch in BYPASS under a profile without network is denied; :external allows it unasked", async () => {
  await withPage(async (url, hits) => {
    await withGate({ mode: "bypass", builtins: BUILTINS }, async (box) => {
      expectError(
        await box.call("web_fetch", { url }),
        "POLICY_DENIED",
        /has no network, and --mode bypass grants nothing/,
      );
      equal(hits(), 0);
    });
    await withGate({ answers: [], profile: ":external", builtins: BUILTINS }, async (box) => {
      equal((await box.call("web_fetch", { url })).status, "SUCCEEDED");
      equal(hits(), 1);
      deepEqual(box.asked, []);
      equal(box.audit.at(-1)!.decidedBy, "profile");
    });
  });
});

Deno.test("web_search in ASK shows the query and provider, and the audit records them", async () => {
  let hits = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    hits++;
    return Response.json({ results: [{ title: "T", url: "https://x.dev/", content: "c" }] });
  });
  try {
    const builtins: BuiltinToolOptions = {
      webSearch: {
        providers: [{
          name: "tavily",
          key: "tvly-secret-key",
          endpoint: `http://127.0.0.1:${server.addr.port}/search`,
        }],
        transport: BUILTINS.webFetch!.transport,
      },
    };
    await withGate({ answers: ["deny", "once"], builtins }, async (box) => {
      expectError(await box.call("web_search", { query: "deno serve" }), "POLICY_DENIED", /./);
      equal(hits, 0);
      equal((await box.call("web_search", { query: "deno serve" })).status, "SUCCEEDED");
      equal(hits, 1);
      deepEqual(box.asked, [
        'web_search search "deno serve" via tavily',
        'web_search search "deno serve" via tavily',
      ]);
      const record = box.audit.at(-1)!;
      equal(record.network, 'search "deno serve" via tavily');
      deepEqual(record.args, { query: "deno serve" });
      equal(record.web?.url, `http://127.0.0.1:${server.addr.port}/search`);
      ok(!JSON.stringify(box.audit).includes("tvly-secret-key"));
    });
  } finally {
    await server.shutdown();
  }
});

testWith(
  [bwrapNeed],
  "a host granted to commands does not open web_fetch, and a host approved for web_fetch does not open commands",
  async () => {
    await withPage(async (url, hits) => {
      const host = new URL(url).host;
      // 1: the grant for commands (once); 2: web_fetch is still asked (deny);
      // 3: web_fetch for the session; 4: a command to the same host (once).
      await withGate({
        answers: ["once", "deny", "session", "once"],
        builtins: BUILTINS,
      }, async (box) => {
        const granted = await box.call("request_permissions", {
          reason: "commands reach the local server",
          hosts: [host],
        });
        equal(granted.status, "SUCCEEDED", JSON.stringify(granted));
        expectError(await box.call("web_fetch", { url }), "POLICY_DENIED", /./);
        equal(box.asked.length, 2);
        equal(hits(), 0);
        await box.gate.endTurn(); // the command grant was for this turn only
        equal((await box.call("web_fetch", { url })).status, "SUCCEEDED");
        equal((await box.call("web_fetch", { url })).status, "SUCCEEDED");
        equal(box.asked.length, 3, "the second fetch of an approved host is not asked");
        equal(hits(), 2);
        ok(box.gate.sessionApprovals.has(`web:${host}`));
        const curl = await box.call("bash", {
          command: `curl -sS --max-time 5 ${url} || echo UNREACHABLE`,
        });
        ok(
          curl.status === "SUCCEEDED" && curl.output.includes("UNREACHABLE"),
          JSON.stringify(curl),
        );
        equal(hits(), 2);
      });
    });
  },
);
