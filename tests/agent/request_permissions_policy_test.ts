import { deepEqual, equal, match, ok, throws } from "node:assert/strict";
import {
  expandRulePath,
  type GrantPlaces,
  type GrantRequest,
  grantRuleCovers,
  grantRuleTouches,
  reviewerLimits,
  ruleFor,
  ternHomeReach,
  unpassableEnv,
} from "../../src/agent/request_permissions_policy.ts";

const PLACES: GrantPlaces = {
  workspace: "/home/u/proj",
  home: "/home/u",
  ternHome: "/home/u/.tern",
};

function request(fields: Partial<GrantRequest>): GrantRequest {
  return { read: [], write: [], net: [], env: [], commands: [], withoutSandbox: false, ...fields };
}

Deno.test("reviewerLimits() lets the reviewer grant narrow requests", () => {
  deepEqual(reviewerLimits(request({ read: ["/srv/data/other"] }), PLACES), []);
  deepEqual(reviewerLimits(request({ read: ["/usr/share/doc"] }), PLACES), []);
  deepEqual(reviewerLimits(request({ read: ["/home/u/proj/docs"] }), PLACES), []);
  // The toolchain folders commands see anyway.
  deepEqual(reviewerLimits(request({ read: ["/home/u/.cargo/registry"] }), PLACES), []);
  deepEqual(reviewerLimits(request({ write: ["/home/u/proj/build"] }), PLACES), []);
  const perHost = { ...PLACES, netPerHost: true };
  deepEqual(reviewerLimits(request({ net: ["registry.npmjs.org"] }), perHost), []);
  deepEqual(reviewerLimits(request({ env: ["NODE_ENV"], commands: ["npm test"] }), PLACES), []);
});

Deno.test("reviewerLimits() never lets the reviewer run commands without the sandbox", () => {
  const limits = reviewerLimits(request({ commands: ["docker ps"], withoutSandbox: true }), PLACES);
  deepEqual(limits, ["running commands without the sandbox"]);
});

Deno.test("reviewerLimits() refuses every write outside the workspace", () => {
  for (const path of ["/tmp/x", "/home/u/proj2", "/home/u/other/file", "/etc/hosts"]) {
    match(reviewerLimits(request({ write: [path] }), PLACES).join(), /writing outside/, path);
  }
});

Deno.test("reviewerLimits() refuses the home folder, a folder holding it and /", () => {
  for (const path of ["/home/u", "/home", "/"]) {
    for (const kind of ["read", "write"] as const) {
      match(reviewerLimits(request({ [kind]: [path] }), PLACES).join(), /home folder/, path);
    }
  }
});

Deno.test("reviewerLimits() refuses tern's home, inside it or holding it, wherever it is", () => {
  const places = { ...PLACES, ternHome: "/srv/tern/home" };
  for (const path of ["/srv/tern/home", "/srv/tern/home/sessions", "/srv/tern", "/srv"]) {
    match(reviewerLimits(request({ read: [path] }), places).join(), /tern's own folder/, path);
  }
  match(reviewerLimits(request({ read: ["/home/u/.tern"] }), PLACES).join(), /tern's own/);
});

Deno.test("reviewerLimits() refuses secret locations and folders holding one", () => {
  for (const path of ["/home/u/.ssh", "/home/u/.ssh/id_rsa", "/home/u/.config", "/home/u/.aws"]) {
    match(reviewerLimits(request({ read: [path] }), PLACES).join(), /secret location/, path);
  }
});

Deno.test("reviewerLimits() refuses every part of the home folder the sandbox hides, whatever its name", () => {
  const hidden = [
    "/home/u/other",
    "/home/u/.codex",
    "/home/u/.claude/.credentials.json",
    "/home/u/.bash_history",
    "/home/u/.zsh_history",
    "/home/u/src/another-project",
    "/home/u/.config/gh/hosts.yml",
    "/home/u/proj2",
  ];
  for (const path of hidden) {
    for (const kind of ["read", "write"] as const) {
      match(
        reviewerLimits(request({ [kind]: [path] }), PLACES).join(),
        /a part of the home folder the sandbox hides|secret location/,
        path,
      );
    }
  }
  match(
    reviewerLimits(request({ read: ["/home/u/.codex"] }), PLACES).join(),
    /the sandbox hides \(other projects, shell histories, other programs' credentials\) \("\/home\/u\/\.codex"\)/,
  );
});

Deno.test("reviewerLimits() refuses hosts while shell commands would get the whole network", () => {
  match(
    reviewerLimits(request({ net: ["registry.npmjs.org"] }), PLACES).join(),
    /network access \(registry.npmjs.org\): shell commands would reach every host/,
  );
});

Deno.test("reviewerLimits() refuses system secrets and folders holding them", () => {
  for (const path of ["/etc", "/etc/shadow", "/etc/ssh", "/root", "/root/.bashrc"]) {
    match(reviewerLimits(request({ read: [path] }), PLACES).join(), /secret location/, path);
  }
  deepEqual(reviewerLimits(request({ read: ["/etc/os-release"] }), PLACES), []);
});

Deno.test("reviewerLimits() refuses variables that look secret or inject code", () => {
  for (
    const name of ["AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "NPM_AUTH", "LD_PRELOAD", "DENO_DIR"]
  ) {
    match(reviewerLimits(request({ env: [name] }), PLACES).join(), /environment variable/, name);
  }
});

Deno.test("unpassableEnv() refuses a variable that loads code, looks secret by name or value, or is unset", () => {
  const values: Record<string, string> = {
    DEPLOY_GH: "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    DATABASE_URL: "postgres://app:hunter2hunter2@db:5432/app",
    BUILD_X: "q8Zr4LmT0vKp2WnY6sJd",
    NODE_ENV: "production",
    EXTRA_PATH: "/opt/jdk-17/bin:/usr/lib/go-1.22/bin",
    GREETING: "hello world from build 42",
    GITHUB_PAT: "short",
    LD_PRELOAD: "/x.so",
  };
  const places = { ...PLACES, envValue: (name: string) => values[name] };
  const why = (name: string) => unpassableEnv(request({ env: ["NODE_ENV", name] }), places);
  for (const name of ["DEPLOY_GH", "DATABASE_URL", "BUILD_X"]) {
    match(why(name) ?? "", /value looks like a secret/, name);
  }
  match(why("GITHUB_PAT") ?? "", /name says it holds a secret/);
  match(why("LD_PRELOAD") ?? "", /load other code/);
  match(why("TERN_UNSET_ONE") ?? "", /"TERN_UNSET_ONE" is not set in tern's environment/);
  for (const name of ["EXTRA_PATH", "GREETING"]) equal(why(name), undefined, name);
  // Without a way to read values, only names are judged.
  equal(unpassableEnv(request({ env: ["BUILD_X", "UNSET"] }), PLACES), undefined);
  match(reviewerLimits(request({ env: ["BUILD_X"] }), places).join(), /environment variable/);
});

Deno.test("reviewerLimits() lists each reason of a mixed request", () => {
  const limits = reviewerLimits(
    request({
      read: ["/srv/ok", "/"],
      write: ["/tmp/x"],
      withoutSandbox: true,
      commands: ["a"],
    }),
    PLACES,
  );
  equal(limits.length, 3, limits.join("\n"));
});

Deno.test("ternHomeReach() refuses tern's home and anything in it, not what holds it", () => {
  match(
    ternHomeReach(request({ write: ["/home/u/.tern/config.jsonc"] }), PLACES)!,
    /never granted/,
  );
  ok(ternHomeReach(request({ read: ["/home/u/.tern"] }), PLACES));
  equal(ternHomeReach(request({ write: ["/home/u"] }), PLACES), undefined);
  equal(ternHomeReach(request({ read: ["/home/u/.ternx"] }), PLACES), undefined);
});

Deno.test("grantRuleCovers() needs every item listed, paths inside a listed folder", () => {
  const rule = { read: ["/data"], write: ["/home/u/cache"], hosts: ["example.com"] };
  ok(grantRuleCovers(rule, request({ read: ["/data/a", "/home/u/cache/x"] })));
  ok(grantRuleCovers(rule, request({ write: ["/home/u/cache"], net: ["example.com"] })));
  equal(grantRuleCovers(rule, request({ write: ["/data/a"] })), false, "read is not write");
  equal(grantRuleCovers(rule, request({ read: ["/data2"] })), false);
  equal(grantRuleCovers(rule, request({ net: ["example.com", "evil.com"] })), false);
  equal(grantRuleCovers(rule, request({ env: ["HOME"] })), false);
  equal(grantRuleCovers({ commands: ["npm test"] }, request({ commands: ["npm test"] })), true);
  equal(
    grantRuleCovers(
      { commands: ["docker ps"] },
      request({ commands: ["docker ps"], withoutSandbox: true }),
    ),
    false,
    "a rule never grants running without the sandbox",
  );
});

Deno.test("grantRuleTouches() refuses all when a deny rule lists nothing, else overlaps", () => {
  ok(grantRuleTouches({}, request({ net: ["a.com"] })));
  ok(grantRuleTouches({ write: ["/home/u"] }, request({ read: ["/home"] })));
  ok(grantRuleTouches({ hosts: ["a.com"] }, request({ net: ["a.com"] })));
  equal(grantRuleTouches({ hosts: ["a.com"] }, request({ net: ["b.com"] })), false);
});

Deno.test("expandRulePath() expands ~ and <workspace> and resolves relative paths", () => {
  equal(expandRulePath("~/cache", PLACES), "/home/u/cache");
  equal(expandRulePath("<workspace>/out", PLACES), "/home/u/proj/out");
  equal(expandRulePath("build", PLACES), "/home/u/proj/build");
  throws(() => expandRulePath("~/x", { ...PLACES, home: undefined }), RangeError);
});

Deno.test("ruleFor() writes the exact allow rule for a request", () => {
  deepEqual(JSON.parse(ruleFor(request({ write: ["/a"], net: ["h"] }))), {
    action: "allow",
    tool: "request_permissions",
    write: ["/a"],
    hosts: ["h"],
  });
});
