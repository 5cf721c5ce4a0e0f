/** The ACP adapter's pure parts: answers, stop reasons, call kinds, prompt messages. */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { ATTACHED_FILE_CHARS, promptMessage } from "../../src/cli/acp/prompt.ts";
import { answerFor } from "../../src/cli/acp/session.ts";
import {
  decisionText,
  declaredArgs,
  declaredKeys,
  proposedDiffContent,
  stopReasonFor,
  toolKind,
  toolTitle,
  updateFor,
} from "../../src/cli/acp/updates.ts";
import { BUILTIN_MANIFEST } from "../../src/tools/mod.ts";
import { SecretMasker } from "../../src/sandbox/secrets.ts";

/** The argument keys of a built-in tool, as its schema declares them. */
const keysOf = (tool: string) => declaredKeys(BUILTIN_MANIFEST, tool);
/** `args` as the ACP adapter reads them for `tool`'s title and kind. */
const shown = (tool: string, args: unknown) => declaredArgs(args, keysOf(tool));

Deno.test("answerFor() takes only the options offered, and never widens a one-time answer", () => {
  const remembers = { rememberable: true };
  const once = { rememberable: false };
  equal(answerFor({ outcome: "selected", optionId: "allow_once" }, once), "once");
  equal(answerFor({ outcome: "selected", optionId: "allow_session" }, remembers), "session");
  // Not offered for a call that cannot be remembered: a denial, not an approval.
  equal(answerFor({ outcome: "selected", optionId: "allow_session" }, once), "deny");
  equal(answerFor({ outcome: "selected", optionId: "allow_always" }, remembers), "deny");
  equal(answerFor({ outcome: "selected", optionId: "reject" }, remembers), "deny");
  equal(answerFor({ outcome: "cancelled" }, remembers), "deny");
});

Deno.test("stopReasonFor() maps each exit reason onto ACP's stop reasons", () => {
  equal(stopReasonFor("COMPLETED"), "end_turn");
  equal(stopReasonFor("CANCELLED"), "cancelled");
  equal(stopReasonFor("MAX_ROUNDS"), "max_turn_requests");
  equal(stopReasonFor("LENGTH_LIMIT"), "max_tokens");
  equal(stopReasonFor("CLIENT_ERROR"), "end_turn");
  equal(stopReasonFor("CLIENT_ERROR", true), "refusal");
});

Deno.test("toolKind() reads a call's kind from its arguments' shape, not its name", () => {
  equal(toolKind(true, shown("bash", { command: "ls" })), "read");
  equal(toolKind(false, shown("bash", { command: "rm -rf x" })), "execute");
  equal(toolKind(false, shown("write", { path: "a.ts", content: "" })), "edit");
  equal(toolKind(false, shown("bash", "not json")), "other");
});

Deno.test("toolKind() and toolTitle() ignore an argument the tool does not declare", () => {
  // `write` takes no `command`: the call fails validation, and meanwhile reads as a write.
  const forged = shown("write", { path: "evil.sh", content: "rm -rf ~", command: "ls -la" });
  equal(toolKind(false, forged), "edit");
  equal(toolTitle("write", forged), "write: evil.sh");
  // `bash` takes no `path`: no file, no diff, no location is made up from one.
  const bash = shown("bash", { command: "make", path: "README.md", content: "x" });
  deepEqual(bash, { command: "make" });
  equal(toolTitle("bash", bash), "bash: make");
  // A tool the model is not offered declares nothing: its name alone.
  equal(toolTitle("nosuch", shown("nosuch", { command: "ls" })), "nosuch");
  equal(toolKind(false, shown("nosuch", { command: "ls" })), "other");
});

Deno.test("toolTitle() shows controls and bidi characters instead of passing them on", () => {
  const title = toolTitle("bash", shown("bash", { command: "echo hello > \u202eexe.txt\u202c" }));
  equal(title, "bash: echo hello > ⟨U+202E⟩exe.txt⟨U+202C⟩");
  equal(toolTitle("re\u001b[0mad\u202e", shown("x", {})), "re␛[0mad⟨U+202E⟩");
  equal(toolTitle("bash", shown("bash", { command: "cd a\nrm -rf b" })), "bash: cd a↵rm -rf b");
});

/** The prompt files of a workspace at `/w` whose read guard refuses nothing. */
const openFiles = (readBuffer?: (path: string) => Promise<string>) => ({
  workspace: "/w",
  refusal: () => Promise.resolve(() => undefined),
  ...(readBuffer === undefined ? {} : { readBuffer }),
});

Deno.test("promptMessage() cuts an embedded resource before it masks it, and keeps no part of a key the cut parts", async () => {
  const known = "sk-known-0123456789abcdefghijklmnop";
  const masker = new SecretMasker([known]);
  const head = "a line of text\n".repeat(ATTACHED_FILE_CHARS / 15 + 1).slice(
    0,
    ATTACHED_FILE_CHARS - 8,
  );
  // The key straddles the cut; megabytes follow that masking all of would take seconds.
  const text = `${head}${known}\n${'password="abcdefgh '.repeat(250_000)}`;
  let masked = 0;
  const message = await promptMessage([
    { type: "text", text: "look" },
    { type: "resource", resource: { uri: "file:///w/big.txt", text } },
  ], {
    ...openFiles(),
    mask: (content) => {
      masked += content.length;
      return masker.mask(content);
    },
  });
  ok(!message.text.includes(known.slice(0, 8)), message.text.slice(-200));
  match(message.text, /more characters not included\)$/);
  ok(message.text.length < ATTACHED_FILE_CHARS + 1_000, `${message.text.length}`);
  // What is masked is bounded by what is kept, not by what the editor sent (megabytes).
  ok(masked < 3 * ATTACHED_FILE_CHARS, `${masked} characters masked`);
});

Deno.test("promptMessage() says where a linked file could not be read, and cuts nothing else", async () => {
  const message = await promptMessage([
    { type: "text", text: "fix it" },
    { type: "resource_link", uri: "file:///w/a.ts", name: "a.ts" },
    { type: "image", data: "", mimeType: "image/png" },
  ], openFiles(() => Promise.reject(new Error("closed"))));
  match(message.text, /^fix it\n\[An image attachment was left out: tern takes text only\]/);
  match(message.text, /\[Cannot read a\.ts \(file:\/\/\/w\/a\.ts\) from the editor: closed\]/);
  deepEqual(message.notAttached, []);
  // The AUTO reviewer's goal: the person's text blocks, never what the editor attached.
  match(message.typed, /^fix it\n/);
  ok(!message.typed.includes("a.ts"), message.typed);
  // Without the editor's reads, the link is named and the agent reads the file itself.
  match(
    (await promptMessage(
      [{ type: "resource_link", uri: "file:///w/a.ts", name: "a" }],
      openFiles(),
    ))
      .text,
    /points at file:\/\/\/w\/a\.ts/,
  );
});

Deno.test("promptMessage() judges a workspace's link by where its folders lead: a workspace named through a link, a FILE: URI", async () => {
  const workspace = await Deno.realPath(await Deno.makeTempDir());
  const outside = await Deno.realPath(await Deno.makeTempDir());
  const aliases = await Deno.realPath(await Deno.makeTempDir());
  const asked: string[] = [];
  try {
    await Deno.writeTextFile(join(outside, "creds.txt"), "OTHER-PROJECT-SECRET\n");
    await Deno.mkdir(join(outside, "shelf"));
    await Deno.writeTextFile(join(outside, "shelf", "x.txt"), "SHELF-SECRET\n");
    await Deno.symlink(join(outside, "creds.txt"), join(workspace, "notes.md"));
    await Deno.symlink(join(outside, "shelf"), join(workspace, "shelf"));
    await Deno.writeTextFile(join(workspace, "own.md"), "OWN\n");
    // The editor opened the workspace by another name: a link to it.
    const alias = join(aliases, "project");
    await Deno.symlink(workspace, alias);
    const message = await promptMessage([
      { type: "resource_link", uri: `file://${alias}/notes.md`, name: "notes.md" },
      { type: "resource", resource: { uri: `file://${alias}/notes.md`, text: "EMBED-ALIAS" } },
      { type: "resource_link", uri: `file://${alias}/shelf/x.txt`, name: "x.txt" },
      { type: "resource", resource: { uri: `FILE://${workspace}/notes.md`, text: "EMBED-UPPER" } },
      { type: "resource", resource: { uri: "file://elsewhere/etc/passwd", text: "EMBED-HOST" } },
      { type: "resource_link", uri: `file://${alias}/own.md`, name: "own.md" },
      { type: "resource_link", uri: `file://${outside}/creds.txt`, name: "creds.txt" },
    ], {
      workspace,
      refusal: () => Promise.resolve(() => undefined),
      readBuffer: (path) => {
        asked.push(path);
        return Promise.resolve(`BUFFER ${path}`);
      },
    });
    // The workspace's own file by the alias, and a file the person picked outside it, are read.
    deepEqual(asked, [join(alias, "own.md"), join(outside, "creds.txt")]);
    const uris = (lines: string[]) => lines.map((line) => line.split(": ").slice(0, 2).join(": "));
    deepEqual(uris(message.notAttached), [
      `not attached: file://${alias}/notes.md`,
      `not attached: file://${alias}/notes.md`,
      `not attached: file://${alias}/shelf/x.txt`,
      `not attached: FILE://${workspace}/notes.md`,
      "not attached: file://elsewhere/etc/passwd",
    ]);
    match(message.notAttached[0], /it leads to ".*creds\.txt", out of the workspace$/);
    match(message.notAttached[4], /not a file URI tern can read/);
    for (const mark of ["EMBED-ALIAS", "EMBED-UPPER", "EMBED-HOST", "SHELF-SECRET"]) {
      equal(message.text.includes(mark), false, mark);
    }
  } finally {
    for (const dir of [workspace, outside, aliases]) await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("promptMessage() asks the editor for no file the read guard refuses or a link leads out to", async () => {
  const workspace = await Deno.realPath(await Deno.makeTempDir());
  const outside = await Deno.realPath(await Deno.makeTempDir());
  const asked: string[] = [];
  try {
    await Deno.writeTextFile(join(outside, "other.txt"), "OUTSIDE-MARK\n");
    await Deno.symlink(join(outside, "other.txt"), join(workspace, "link.txt"));
    const message = await promptMessage([
      { type: "resource_link", uri: `file://${workspace}/link.txt`, name: "link.txt" },
      { type: "resource_link", uri: `file://${workspace}/vault/key.txt`, name: "key.txt" },
      { type: "resource", resource: { uri: `file://${workspace}/vault/k`, text: "EMBEDDED" } },
      { type: "resource_link", uri: `file://${workspace}/new.txt`, name: "new.txt" },
    ], {
      workspace,
      refusal: () =>
        Promise.resolve((_real: string, named: string) =>
          named.includes("/vault/") ? 'your deny rules keep "vault" from tools' : undefined
        ),
      readBuffer: (path) => {
        asked.push(path);
        return Promise.resolve("NEW-BUFFER");
      },
    });
    // Only the file not saved yet, named inside the workspace, is read through the editor.
    deepEqual(asked, [join(workspace, "new.txt")]);
    deepEqual(message.notAttached, [
      `not attached: file://${workspace}/link.txt: it leads to "${outside}/other.txt", ` +
      "out of the workspace",
      `not attached: file://${workspace}/vault/key.txt: your deny rules keep "vault" from tools`,
      `not attached: file://${workspace}/vault/k: your deny rules keep "vault" from tools`,
    ]);
    equal(message.text.includes("EMBEDDED"), false);
    match(message.text, /NEW-BUFFER/);
  } finally {
    await Deno.remove(workspace, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("decisionText() tells how a restored approval or grant was decided, on one line", () => {
  equal(
    decisionText({ allow: true, by: "policy", reason: "Restored from the session: (tool:write)" }),
    "allowed by policy: Restored from the session: (tool:write)",
  );
  equal(
    decisionText(
      { allow: false, by: "reviewer", reason: "Reviewer: too wide\nsee" },
      { name: "request_permissions", summary: "restored from the session: read /x" },
    ),
    "request_permissions restored from the session: read /x: denied by reviewer: " +
      "Reviewer: too wide↵see",
  );
  equal(
    decisionText({ allow: true, by: "bypass", reason: "bypass" }),
    "allowed (review bypassed): bypass",
  );
});

Deno.test("proposedDiffContent() shows no content of a file a symlink leads to outside the workspace", async () => {
  const workspace = await Deno.realPath(await Deno.makeTempDir());
  const outside = await Deno.makeTempDir();
  const reading = { refuse: () => undefined, mask: (text: string) => text };
  try {
    await Deno.writeTextFile(join(outside, "secret.txt"), "SECRET-MARK\n");
    await Deno.symlink(join(outside, "secret.txt"), join(workspace, "link.txt"));
    await Deno.writeTextFile(join(workspace, "own.txt"), "mine\n");
    const linked = await proposedDiffContent(
      shown("write", { path: "link.txt", content: "x" }),
      workspace,
      reading,
    );
    equal(linked.length, 1);
    match(JSON.stringify(linked), /No diff: it leads out of the workspace/);
    equal(JSON.stringify(linked).includes("SECRET-MARK"), false);
    deepEqual(
      await proposedDiffContent(
        shown("write", { path: "own.txt", content: "x" }),
        workspace,
        reading,
      ),
      [
        { type: "diff", path: join(workspace, "own.txt"), oldText: "mine\n", newText: "x" },
      ],
    );
  } finally {
    await Deno.remove(workspace, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("updateFor() tells the editor the arguments a hook put in place of the model's", async () => {
  const update = await updateFor(
    { type: "tool_input", callId: "c1", name: "bash", args: { command: "echo ran" } },
    {
      workspace: "/work/project",
      readRefusal: () => Promise.reject(new Error("no file is read for this event")),
      declaredKeys: keysOf,
      mask: (text) => text,
    },
  );
  deepEqual(update, {
    sessionUpdate: "tool_call_update",
    toolCallId: "c1",
    title: "bash: echo ran",
    rawInput: { command: "echo ran" },
    locations: [],
  });
});
