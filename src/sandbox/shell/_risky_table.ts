/** Well-known commands that are not read-only, with what they do. */
import { namesOption } from "./_options.ts";
import { type CommandRisk, risk, type RiskLabel } from "./_risk.ts";
import { SHELLS } from "./_hidden_code.ts";

type Group = [RiskLabel, string, string];

/** Label, what the commands do, and their names. */
const GROUPS: readonly Group[] = [
  ["destructive", "deletes or overwrites data", "rm rmdir unlink shred dd truncate wipefs mkfs"],
  ["destructive", "deletes or overwrites data", "fdisk sfdisk parted"],
  ["destructive", "stops processes", "kill pkill killall"],
  [
    "writes-files",
    "writes files",
    `mv cp touch mkdir ln chmod chown chgrp tee install rsync tar unzip zip gzip gunzip bzip2
    bunzip2 xz unxz patch split csplit mktemp mkfifo mknod setfacl chattr sponge`,
  ],
  [
    "network",
    "uses the network",
    `curl wget ssh scp sftp nc ncat netcat telnet ftp ping dig nslookup host socat http https
    aria2c whois traceroute`,
  ],
  ["runs-code", "can run commands with system()", "awk gawk mawk nawk"],
  [
    "runs-code",
    "runs project code",
    "npm npx pnpm yarn make cmake ninja cargo go gradle mvn pip pip3 pytest jest vitest tsc",
  ],
  [
    "runs-code",
    "runs other code",
    `rustc gcc cc clang docker podman kubectl watch tmux screen crontab at batch systemd-run
    script expect gdb strace ltrace valgrind vi vim nvim nano emacs alias trap enable eval
    source . let`,
  ],
  [
    "privileged",
    "needs or changes system privileges",
    `sudo su doas pkexec chroot mount umount systemctl service shutdown reboot halt poweroff
    iptables nft useradd userdel usermod passwd visudo modprobe insmod rmmod sysctl setcap
    nsenter unshare`,
  ],
];

const LABELS: ReadonlyMap<string, readonly [RiskLabel, string]> = new Map(
  GROUPS.flatMap(([label, what, list]) =>
    list.trim().split(/\s+/).map((name) => [name, [label, what] as const] as const)
  ),
);

/** Interpreters, and the option that takes code inline (`python -c`, `node -e`). */
const INTERPRETERS: Readonly<Record<string, readonly string[]>> = {
  python: ["-c"],
  python2: ["-c"],
  python3: ["-c"],
  node: ["-e", "--eval", "-p", "--print"],
  deno: ["eval"],
  bun: ["-e", "--eval"],
  perl: ["-e", "-E"],
  ruby: ["-e"],
  php: ["-r"],
  lua: ["-e"],
  Rscript: ["-e"],
};

const VERSION_ARGS = new Set(["--version", "-V", "-v", "version"]);

/** The risk of a known non-read-only command, or undefined when the command is not known. */
export function riskyCommandRisk(name: string, args: readonly string[]): CommandRisk | undefined {
  const inline = INTERPRETERS[name] ?? (SHELLS.has(name) ? ["-c"] : undefined);
  const labeled = LABELS.get(name.startsWith("mkfs.") ? "mkfs" : name);
  if (!inline && !labeled) return undefined;
  if (args.length === 1 && VERSION_ARGS.has(args[0])) {
    return risk("read-only", `"${name} ${args[0]}" prints its version`);
  }
  if (inline) {
    const isInline = (arg: string) =>
      inline.includes(arg) || (SHELLS.has(name) && /^-[a-z]*c[a-z]*$/.test(arg));
    const flag = args.find(isInline);
    return risk(
      "runs-code",
      flag ? `"${name} ${flag}" runs code given inline` : `"${name}" runs a program`,
    );
  }
  const [label, what] = labeled ?? ["unknown", ""];
  const recursive = name === "rm" ? recursiveOption(args) : undefined;
  if (recursive) return risk("destructive", `"rm ${recursive}" deletes recursively`);
  if (what === "runs project code" && args.length > 0 && !args[0].startsWith("-")) {
    return risk(label, `"${name} ${args[0]}" ${what}`);
  }
  return risk(label, `"${name}" ${what}`);
}

/** `-r`, `-rf`, `--recursive` (or `--rec`: rm takes abbreviations), as written. */
function recursiveOption(args: readonly string[]): string | undefined {
  return args.find((arg) =>
    namesOption(arg, "--recursive") || /^-[a-zA-Z]*[rR]/.test(arg) && !arg.startsWith("--")
  );
}
