/**
 * The memory of a whole process tree while it runs (issue 21: "the whole process tree ≤ 120 MB"):
 * every `everyMs`, the processes below a root (by parent pid, from /proc), and the sum of their
 * RSS (a page two of them share counted twice: an upper bound) and of their proportional set
 * sizes (PSS: a page shared by n processes, anywhere on the machine, counts 1/n in each, so
 * with other Deno processes running it counts less than the tree holds). Linux only. GNU time
 * gives only the largest single process; a tree of tern's main process, bubblewrap, the warm
 * shell, git and the tool worker can hold more than any one of them.
 *
 * A child that runs its parent's program without an `exec()` holds its parent's pages: between
 * `clone()` and `exec()` the very same ones (glibc's `posix_spawn` clones with `CLONE_VM`), and a
 * shell's subshell shares them copy-on-write. Its RSS and PSS repeat the parent's, so such a child
 * (its executable and command line are its parent's) is left out of the sums and counted apart
 * (`unstarted`): a sampler that landed in a spawn's window once read tern's 64 MB twice.
 *
 * Deno lets only a process with every permission (`-A`) read /proc, and the benchmarks run with
 * fewer: {@linkcode startTreeWatch} runs the sampling in a process of its own (this module as a
 * program: it reads the root's pid from stdin, samples until stdin closes, then prints the
 * peaks as JSON).
 */

/** The peaks a watch saw. */
export interface TreeMemory {
  /** The largest sum of PSS over the tree at one sample, in MB. */
  peakPssMb: number;
  /** The largest sum of RSS over the tree at one sample, in MB (shared pages counted each time). */
  peakRssMb: number;
  /** The most processes in the tree at one sample. */
  mostProcesses: number;
  /** How many samples were taken. */
  samples: number;
  /** At the sample of the largest RSS sum: each process's name (its command line) and RSS in MB. */
  atPeak?: Array<{ command: string; rssMb: number }>;
  /** Samples that saw a child not yet started as its own program (see the module notes). */
  unstarted?: number;
}

/** A running watch: `stop()` ends it and gives the peaks. */
export interface TreeWatch {
  stop(): TreeMemory;
}

/**
 * Watches the processes below `root` (not `root` itself: the caller's wrapper, such as GNU
 * time), every `everyMs` milliseconds, until `stop()`.
 */
export function watchTree(root: number, everyMs = 10): TreeWatch {
  const peaks: TreeMemory = { peakPssMb: 0, peakRssMb: 0, mostProcesses: 0, samples: 0 };
  const sample = () => {
    const pids = descendants(root);
    let pss = 0;
    let rss = 0;
    const each: Array<{ pid: number; rssKb: number }> = [];
    let sawUnstarted = false;
    for (const pid of pids) {
      if (notStarted(pid)) {
        sawUnstarted = true;
        continue;
      }
      const sizes = memoryOf(pid);
      if (sizes === undefined) continue;
      pss += sizes.pssKb;
      rss += sizes.rssKb;
      each.push({ pid, rssKb: sizes.rssKb });
    }
    peaks.peakPssMb = Math.max(peaks.peakPssMb, pss / 1024);
    if (rss / 1024 > peaks.peakRssMb) {
      peaks.peakRssMb = rss / 1024;
      peaks.atPeak = each.map(({ pid, rssKb }) => ({
        command: commandOf(pid),
        rssMb: Math.round(rssKb / 102.4) / 10,
      }));
    }
    peaks.mostProcesses = Math.max(peaks.mostProcesses, each.length);
    if (sawUnstarted) peaks.unstarted = (peaks.unstarted ?? 0) + 1;
    peaks.samples++;
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return { ...peaks };
    },
  };
}

/** A sampler process, started ahead so that it sees a run from its first milliseconds. */
export interface TreeSampler {
  /** Starts watching the processes below `root`. */
  watch(root: number): Promise<void>;
  /** Ends the watch and gives its peaks. */
  stop(): Promise<TreeMemory>;
}

/** Starts this module as a sampler program (`deno run -A`), ready once this resolves. */
export async function startTreeWatch(everyMs = 10): Promise<TreeSampler> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-config", new URL(import.meta.url).pathname, String(everyMs)],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const line = async (): Promise<string> => {
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`The tree sampler ended early: ${JSON.stringify(text)}`);
      text += value;
    }
    const [first, ...rest] = text.split("\n");
    text = rest.join("\n");
    return first;
  };
  const hello = await line();
  if (hello !== "ready") throw new Error(`The tree sampler said ${JSON.stringify(hello)}`);
  return {
    async watch(root) {
      await writer.write(new TextEncoder().encode(`${root}\n`));
    },
    async stop() {
      await writer.close();
      const peaks = JSON.parse(await line()) as TreeMemory;
      await reader.cancel();
      await child.status;
      return peaks;
    },
  };
}

/** The pids below `root` now, by the parent pid each process's /proc/<pid>/stat names. */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const parent = parentOf(Number(entry.name));
    if (parent === undefined) continue;
    const list = children.get(parent) ?? [];
    list.push(Number(entry.name));
    children.set(parent, list);
  }
  const found: number[] = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    found.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

function parentOf(pid: number): number | undefined {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[1]);
  } catch {
    return undefined; // Gone meanwhile.
  }
}

/**
 * True for a child that runs its parent's executable with its parent's command line: one
 * between `clone()` and `exec()`, in its parent's memory (see the module notes).
 */
function notStarted(pid: number): boolean {
  const parent = parentOf(pid);
  if (parent === undefined) return false;
  try {
    return Deno.readLinkSync(`/proc/${pid}/exe`) === Deno.readLinkSync(`/proc/${parent}/exe`) &&
      Deno.readTextFileSync(`/proc/${pid}/cmdline`) ===
        Deno.readTextFileSync(`/proc/${parent}/cmdline`);
  } catch {
    return false;
  }
}

/** The first 120 characters of `pid`'s command line on one line: arguments spaced, breaks as ↵. */
function commandOf(pid: number): string {
  try {
    const line = Deno.readTextFileSync(`/proc/${pid}/cmdline`).replaceAll("\0", " ").trim()
      .replaceAll("\n", "↵");
    return line.slice(0, 120);
  } catch {
    return `(pid ${pid}, gone)`;
  }
}

/** PSS and RSS of `pid` in kB, from /proc/<pid>/smaps_rollup; undefined once it is gone. */
function memoryOf(pid: number): { pssKb: number; rssKb: number } | undefined {
  try {
    const rollup = Deno.readTextFileSync(`/proc/${pid}/smaps_rollup`);
    const kb = (name: string) =>
      Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1]);
    const pssKb = kb("Pss");
    const rssKb = kb("Rss");
    // A zombie or a kernel thread has no mappings to sum.
    return Number.isFinite(pssKb) && Number.isFinite(rssKb) ? { pssKb, rssKb } : undefined;
  } catch {
    return undefined;
  }
}

if (import.meta.main) {
  const everyMs = Number(Deno.args[0] ?? 10);
  let watch: TreeWatch | undefined;
  console.log("ready");
  const lines = Deno.stdin.readable.pipeThrough(new TextDecoderStream());
  let buffered = "";
  for await (const piece of lines) {
    buffered += piece;
    const parts = buffered.split("\n");
    buffered = parts.pop()!;
    for (const line of parts) {
      if (/^\d+$/.test(line)) watch ??= watchTree(Number(line), everyMs);
    }
  }
  const peaks = watch?.stop() ?? { peakPssMb: 0, peakRssMb: 0, mostProcesses: 0, samples: 0 };
  console.log(JSON.stringify(peaks));
}
