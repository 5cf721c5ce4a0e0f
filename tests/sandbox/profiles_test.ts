import { deepEqual, equal, match, ok, throws } from "node:assert/strict";
import {
  BUILTIN_PROFILES,
  compileProfile,
  type CustomProfile,
  type ProfileContext,
  profileNames,
  widenGrants,
} from "../../src/sandbox/profiles.ts";
import type { Grants } from "../../src/sandbox/types.ts";

const WS = "/work/project";
const TMP = "/tmp/tern-run-1";
const HOME = "/home/dev";

function context(custom: Record<string, CustomProfile> = {}): ProfileContext {
  return { workspace: WS, tmp: TMP, home: HOME, custom };
}

const NOTHING: Grants = { read: [], write: [], net: [], env: [], run: [] };

Deno.test("compileProfile() :workspace reads and writes the workspace and tmp, nothing else", () => {
  deepEqual(compileProfile(":workspace", context()), {
    name: ":workspace",
    grants: { ...NOTHING, read: [WS, TMP], write: [WS, TMP] },
    shell: "bwrap",
    readOnly: false,
  });
});

Deno.test("compileProfile() :read-only reads only the workspace and is read-only", () => {
  deepEqual(compileProfile(":read-only", context()), {
    name: ":read-only",
    grants: { ...NOTHING, read: [WS] },
    shell: "bwrap",
    readOnly: true,
  });
});

Deno.test("compileProfile() :external is :workspace plus every host", () => {
  deepEqual(compileProfile(":external", context()), {
    name: ":external",
    grants: { ...NOTHING, read: [WS, TMP], write: [WS, TMP], net: "all" },
    shell: "bwrap",
    readOnly: false,
  });
});

Deno.test("compileProfile() :danger-full-access grants everything and runs the shell unsandboxed", () => {
  deepEqual(compileProfile(":danger-full-access", context()), {
    name: ":danger-full-access",
    grants: { read: "all", write: "all", net: "all", env: "all", run: "all" },
    shell: "none",
    readOnly: false,
  });
});

Deno.test("BUILTIN_PROFILES names the four built-in profiles, narrowest first", () => {
  deepEqual([...BUILTIN_PROFILES], [
    ":read-only",
    ":workspace",
    ":external",
    ":danger-full-access",
  ]);
});

Deno.test("compileProfile() expands <workspace>, <tmp>, ~/ and relative paths in custom profiles", () => {
  const compiled = compileProfile(
    "docs",
    context({
      docs: {
        read: ["<workspace>", "<tmp>/cache", "~/.cargo/registry", "vendor", "./build/../out", "~"],
        write: ["<workspace>/docs", "/var/tmp/x/../y"],
      },
    }),
  );
  deepEqual(compiled, {
    name: "docs",
    grants: {
      ...NOTHING,
      read: [WS, `${TMP}/cache`, `${HOME}/.cargo/registry`, `${WS}/vendor`, `${WS}/out`, HOME],
      write: [`${WS}/docs`, "/var/tmp/y"],
    },
    shell: "bwrap",
    readOnly: false,
  });
});

Deno.test('compileProfile() turns "*" into "all" and keeps net, run and env entries as written', () => {
  const compiled = compileProfile(
    "ci",
    context({
      ci: {
        read: ["*"],
        write: ["out", "*"],
        net: ["registry.npmjs.org", "api.github.com:443", "registry.npmjs.org"],
        run: ["git"],
        env: ["*"],
      },
    }),
  );
  deepEqual(compiled.grants, {
    read: "all",
    write: "all",
    net: ["registry.npmjs.org", "api.github.com:443"],
    run: ["git"],
    env: "all",
  });
});

Deno.test("compileProfile() leaves lists a custom profile omits empty", () => {
  deepEqual(compileProfile("bare", context({ bare: {} })).grants, NOTHING);
});

Deno.test("compileProfile() fails to expand ~/ when the home directory is unknown", () => {
  throws(
    () => compileProfile("h", { workspace: WS, tmp: TMP, custom: { h: { read: ["~/x"] } } }),
    (error: unknown) => {
      ok(error instanceof RangeError);
      equal(error.message, 'Cannot expand "~/x": the home directory is unknown');
      return true;
    },
  );
});

Deno.test("compileProfile() rejects an unknown name with a RangeError listing the known names", () => {
  throws(
    () => compileProfile(":workspce", context({ docs: {} })),
    (error: unknown) => {
      ok(error instanceof RangeError);
      equal(
        error.message,
        'Unknown sandbox profile ":workspce": expected one of ":read-only", ":workspace", ' +
          '":external", ":danger-full-access", "docs"',
      );
      return true;
    },
  );
});

Deno.test('compileProfile() does not accept a custom profile whose name starts with ":"', () => {
  throws(
    () => compileProfile(":mine", context({ ":mine": { read: ["*"] }, docs: {} })),
    (error: unknown) => {
      ok(error instanceof RangeError);
      match(error.message, /^Unknown sandbox profile ":mine": expected one of /);
      ok(error.message.includes('"docs"'), error.message);
      ok(!error.message.includes('":mine",'), `lists the refused name: ${error.message}`);
      return true;
    },
  );
});

Deno.test("compileProfile() a custom profile cannot replace a built-in one", () => {
  const compiled = compileProfile(":read-only", context({ ":read-only": { write: ["*"] } }));
  deepEqual(compiled.grants, { ...NOTHING, read: [WS] });
  equal(compiled.readOnly, true);
});

Deno.test("compileProfile() treats names inherited from Object.prototype as unknown", () => {
  for (const name of ["constructor", "toString", "__proto__"]) {
    throws(() => compileProfile(name, context()), RangeError, name);
  }
});

Deno.test("profileNames() lists built-ins first, then custom names, never a custom ':' name", () => {
  deepEqual(profileNames({ b: {}, a: {} }), [...BUILTIN_PROFILES, "b", "a"]);
  deepEqual(profileNames({ ":workspace": {}, ":x": {} }), [...BUILTIN_PROFILES]);
  deepEqual(profileNames(), [...BUILTIN_PROFILES]);
});

Deno.test("widenGrants() unions each list without duplicates", () => {
  const base = compileProfile(":workspace", context()).grants;
  deepEqual(
    widenGrants(base, { read: ["/opt/data", WS], net: ["example.com"], env: ["CI"] }),
    {
      read: [WS, TMP, "/opt/data"],
      write: [WS, TMP],
      net: ["example.com"],
      env: ["CI"],
      run: [],
    },
  );
});

Deno.test('widenGrants() lets "all" absorb lists on either side', () => {
  const widened = widenGrants(
    { ...NOTHING, read: [WS], net: "all" },
    { read: "all", net: ["example.com"] },
  );
  equal(widened.read, "all");
  equal(widened.net, "all");
  deepEqual(widened.write, []);
});

Deno.test("widenGrants() leaves the base unchanged and unshared when nothing is added", () => {
  const base: Grants = { ...NOTHING, read: [WS], write: [WS] };
  const widened = widenGrants(base, {});
  deepEqual(widened, base);
  ok(widened.read !== base.read, "returns a new list");
  deepEqual(base.read, [WS]);
});
