/** The status line under the editor: where, which model, how confined, how much used. */
import { formatCost } from "../llm/model_info.ts";
import { elideMiddle, formatTokens } from "./format.ts";
import type { Theme } from "./theme.ts";
import { truncateToWidth, visibleWidth } from "./width.ts";

/** What the status line shows. */
export interface StatusInfo {
  cwd: string;
  /** The home folder; a `cwd` inside it is shown with `~`. */
  home?: string;
  model: string;
  provider?: string;
  /** The thinking level, e.g. `off`, `medium`. */
  thinking: string;
  /** The review mode, e.g. `ask`. */
  mode: string;
  /** The permission profile, e.g. `:workspace`. */
  profile: string;
  sandbox: "bubblewrap" | "unsandboxed" | "off" | "starting";
  /** Share of the model's context window in use, 0–100. */
  contextPercent?: number;
  tokens?: number;
  /** Share of the last request's input read from the provider's cache, 0–100. */
  cachePercent?: number;
  /** USD spent in this session. */
  cost?: number;
  /** What the agent is doing, e.g. `working 3.2s`. */
  busy?: string;
  hint?: string;
}

interface Part {
  text: string;
  /** Parts with a higher rank are dropped first when the line is too narrow. */
  rank: number;
}

/** Cells the working folder keeps before parts are dropped for it. */
const MIN_CWD = 12;
const SEPARATOR = " · ";
/** Parts from this rank on (provider, tokens, cost, hint) go before the folder is shortened. */
const USAGE_RANK = 7;

/**
 * The status line: one line of at most `width` cells. As the width shrinks, parts go in this
 * order: hint, cost, tokens, provider, thinking level, sandbox, profile, mode, context; the
 * folder is elided in the middle. The model (cut in the middle when it does not fit beside
 * them), the busy state and an `unsandboxed` warning stay;
 * while busy the hint (Esc to stop) is kept until only those and the context are left.
 */
export function statusLine(info: StatusInfo, width: number, theme: Theme): string[] {
  if (width <= 0) return [""];
  const parts = statusParts(info, theme);
  // The parts that always stay must fit: a long model name (a project's config may set one) is
  // cut in the middle rather than pushing `unsandboxed` or the busy state off the line.
  const kept = parts.slice(1).filter((part) => part.rank === 0);
  const modelRoom = width -
    kept.reduce((sum, part) => sum + visibleWidth(part.text) + SEPARATOR.length, 0);
  if (visibleWidth(info.model) > modelRoom) {
    parts[0] = { text: theme.bold(elideMiddle(info.model, Math.max(1, modelRoom))), rank: 0 };
  }
  const sep = theme.dim(SEPARATOR);
  const cwd = shortenHome(info.cwd, info.home);
  const cwdRoom = (shown: Part[]) =>
    width - shown.reduce((sum, part) => sum + visibleWidth(part.text) + SEPARATOR.length, 0);
  const shown = [...parts];
  const dropUntil = (need: number, minRank: number) => {
    while (cwdRoom(shown) < need) {
      const drop = shown.reduce((worst, part) => part.rank > worst.rank ? part : worst, {
        text: "",
        rank: minRank - 1,
      });
      if (drop.rank < minRank) return;
      shown.splice(shown.indexOf(drop), 1);
    }
  };
  // The whole folder is worth more than the usage figures, a short one less than the rest.
  dropUntil(visibleWidth(cwd), USAGE_RANK);
  dropUntil(Math.min(MIN_CWD, visibleWidth(cwd)), 1);
  const room = cwdRoom(shown);
  const head = room >= 1 ? [theme.blue(elideMiddle(cwd, room))] : [];
  const line = [...head, ...shown.map((part) => part.text)].join(sep);
  return [truncateToWidth(line, width)];
}

/** The parts of the status line, the model first. */
function statusParts(info: StatusInfo, theme: Theme): Part[] {
  const parts: Part[] = [];
  parts.push({ text: theme.bold(info.model), rank: 0 });
  if (info.provider !== undefined && info.provider !== "") {
    parts.push({ text: theme.dim(info.provider), rank: 7 });
  }
  if (info.thinking !== "" && info.thinking !== "off") {
    parts.push({ text: `think ${info.thinking}`, rank: 6 });
  }
  parts.push({ text: info.mode === "bypass" ? theme.red(info.mode) : info.mode, rank: 3 });
  parts.push({
    text: info.profile === ":danger-full-access" ? theme.red(info.profile) : info.profile,
    rank: 4,
  });
  parts.push(sandboxPart(info.sandbox, theme));
  if (info.contextPercent !== undefined) {
    const percent = Math.round(info.contextPercent);
    const text = `ctx ${percent}%`;
    const paint = percent >= 95 ? theme.red : percent > 80 ? theme.yellow : theme.dim;
    parts.push({ text: paint(text), rank: percent > 80 ? 1 : 2 });
  }
  if (info.tokens !== undefined) {
    parts.push({ text: theme.dim(`${formatTokens(info.tokens)} tok`), rank: 8 });
  }
  if (info.cachePercent !== undefined) {
    parts.push({ text: theme.dim(`cache ${Math.round(info.cachePercent)}%`), rank: 8 });
  }
  if (info.cost !== undefined) parts.push({ text: theme.dim(formatCost(info.cost)), rank: 9 });
  if (info.busy !== undefined && info.busy !== "") {
    parts.push({ text: theme.cyan(info.busy), rank: 0 });
  }
  if (info.hint !== undefined && info.hint !== "") {
    // While the agent works its key hint (Esc to stop) is what the person needs most.
    const busy = info.busy !== undefined && info.busy !== "";
    parts.push({ text: busy ? info.hint : theme.dim(info.hint), rank: busy ? 1 : 10 });
  }
  return parts;
}

function sandboxPart(sandbox: StatusInfo["sandbox"], theme: Theme): Part {
  switch (sandbox) {
    case "bubblewrap":
      return { text: theme.green("bwrap"), rank: 5 };
    case "starting":
      return { text: theme.dim("sandbox…"), rank: 5 };
    case "unsandboxed":
      // Commands run unconfined: the one fact that must not scroll out of view.
      return { text: theme.red("unsandboxed"), rank: 0 };
    case "off":
      return { text: theme.yellow("no sandbox"), rank: 2 };
  }
}

/** `/home/ada/src/x` → `~/src/x` when `home` is `/home/ada`. */
function shortenHome(cwd: string, home: string | undefined): string {
  if (home === undefined || home === "" || home === "/") return cwd;
  const root = home.endsWith("/") ? home.slice(0, -1) : home;
  if (cwd === root) return "~";
  return cwd.startsWith(`${root}/`) ? `~${cwd.slice(root.length)}` : cwd;
}
