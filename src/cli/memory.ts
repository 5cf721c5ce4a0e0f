/**
 * `tern memory save|list|forget`: the remembered facts from the command line, the same
 * append-only files as /save and /memory (src/memory/facts.ts); `tern memory log|undo`: the
 * background consolidations into `.tern/memory/` (src/cli/memory_log.ts).
 */
import { loadConfig } from "../config/mod.ts";
import { jsonForTerminal, terminalText } from "../core/terminal_text.ts";
import { MemoryStore } from "../memory/facts.ts";
import { keyMasker } from "../sandbox/secrets.ts";
import type { CommandLine } from "./args.ts";
import { resolveWorkspace } from "./process_env.ts";
import type { RunFlags } from "./run.ts";

/** Runs one `tern memory` action; 0, or a FactTextError / FactIdError (exit code 2). */
export async function runMemoryCommand(
  line: Extract<CommandLine, { command: "memory" }>,
  flags: RunFlags,
): Promise<number> {
  const workspace = resolveWorkspace(flags.cwd);
  const { config } = await loadConfig({ cwd: workspace, flags: flags.config });
  // The keys tern holds and the key formats: no fact keeps one, none is shown.
  const store = await MemoryStore.open(config.ternHome, workspace, { masker: keyMasker(config) });
  const out = (text: string) => Deno.stdout.writeSync(new TextEncoder().encode(text + "\n"));
  switch (line.action) {
    case "save": {
      const fact = await store.add(line.text ?? "", line.global ? "user" : "project");
      out(
        line.json
          ? jsonForTerminal(JSON.stringify(fact))
          : `Remembered ${fact.id} (${
            fact.scope === "user" ? "every workspace" : "this workspace"
          }): ` +
            terminalText(fact.text),
      );
      return 0;
    }
    case "forget": {
      const fact = await store.forget(line.text ?? "");
      out(
        line.json
          ? jsonForTerminal(JSON.stringify(fact))
          : `Forgot ${fact.id}: ${terminalText(fact.text)}`,
      );
      return 0;
    }
    case "log": {
      const { consolidationLog, formatConsolidationLog } = await import("./memory_log.ts");
      const log = await consolidationLog(config.ternHome, workspace);
      if (line.json) {
        const items = log.map(({ record: _record, ...item }) => item);
        out(jsonForTerminal(JSON.stringify(items)));
      } else {
        for (const text of formatConsolidationLog(log)) out(terminalText(text));
      }
      return 0;
    }
    case "undo": {
      const { undoConsolidation } = await import("./memory_log.ts");
      const result = await undoConsolidation(config.ternHome, workspace, line.text ?? "");
      if (line.json) {
        const { item: { record: _record, ...item }, ...rest } = result;
        out(jsonForTerminal(JSON.stringify({ ...rest, item })));
        return 0;
      }
      out(
        `Undid ${result.item.id}: restored ${
          result.restored.length > 0 ? result.restored.join(", ") : "no files"
        }`,
      );
      for (const path of result.changed) {
        out(terminalText(`Left ${path} as it is: it changed since the consolidation wrote it`));
      }
      if (result.note) out(terminalText(result.note));
      return 0;
    }
    case "list": {
      const facts = store.list();
      if (line.json) {
        out(jsonForTerminal(JSON.stringify(facts)));
      } else if (facts.length === 0) {
        out('No remembered facts: tern memory save "…" adds one');
      } else {
        for (const fact of facts) {
          const scope = fact.scope === "user" ? "global " : "project";
          // The date is the file's too: an edited file may put an escape sequence there.
          const date = terminalText(fact.created.slice(0, 10));
          out(`${fact.id}  ${scope}  ${date}  ${terminalText(fact.text)}`);
        }
      }
      return 0;
    }
  }
}
