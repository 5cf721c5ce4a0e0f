# Shared by run.sh and bin/*: finds a Deno >= 2.9 and declares the main process's permissions.
# Sourced, not executed.
TERN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TERN_DENO_VERSION="2.9.6"

# deno_ok BIN: true when BIN runs and reports version 2.9 or newer.
deno_ok() {
  local v
  v="$("$1" --version 2>/dev/null | head -n1 | awk '{print $2}')" || return 1
  [ -n "$v" ] || return 1
  local major="${v%%.*}" rest="${v#*.}"
  local minor="${rest%%.*}"
  [ "$major" -gt 2 ] || { [ "$major" -eq 2 ] && [ "$minor" -ge 9 ]; }
}

# find_deno: prints the path of a usable deno, installing the pinned one into .tools/ if needed.
find_deno() {
  local local_bin="$TERN_ROOT/.tools/node_modules/@deno/linux-x64-glibc/deno"
  # A pinned copy installed earlier wins without a version check: it only exists because no
  # suitable deno was on PATH, and checking costs a process start on every command.
  if [ -x "$local_bin" ]; then
    echo "$local_bin"
    return 0
  fi
  if command -v deno >/dev/null 2>&1 && deno_ok "$(command -v deno)"; then
    command -v deno
    return 0
  fi
  command -v npm >/dev/null 2>&1 || {
    echo "tern: no deno >= 2.9 on PATH and no npm to install it: install Node.js/npm or Deno $TERN_DENO_VERSION" >&2
    return 1
  }
  echo "tern: installing Deno $TERN_DENO_VERSION into $TERN_ROOT/.tools (one time)" >&2
  mkdir -p "$TERN_ROOT/.tools"
  (cd "$TERN_ROOT/.tools" && npm install --no-save --no-audit --no-fund --silent "deno@$TERN_DENO_VERSION" >&2) || {
    echo "tern: npm install deno@$TERN_DENO_VERSION failed" >&2
    return 1
  }
  deno_ok "$local_bin" || {
    echo "tern: the installed Deno at $local_bin does not run" >&2
    return 1
  }
  echo "$local_bin"
}

# Environment variables tern's own process may read: config and keys (TERN_*, OPENAI_*,
# ANTHROPIC_*, OPENROUTER_*, VLLM_API_KEY),
# locale and terminal, what the shell sandbox passes on, host sockets it must hide, Deno's cache
# for the tool worker, and one that a dependency (tinyglobby) reads when it loads.
TERN_ENV_NAMES="HOME,PATH,USER,LANG,LC_ALL,LC_CTYPE,LC_MESSAGES,TERM,TZ,TMPDIR,NO_COLOR"
TERN_ENV_NAMES+=",TERN_*,OPENAI_*,ANTHROPIC_*,OPENROUTER_*,VLLM_API_KEY"
TERN_ENV_NAMES+=",SSH_AUTH_SOCK,DOCKER_HOST,GPG_AGENT_INFO"
TERN_ENV_NAMES+=",DENO_DIR,XDG_CACHE_HOME,TINYGLOBBY_DEBUG"

# tern_deno_flags DENO_BIN: sets TERN_DENO_FLAGS, the main process's permissions, for the
# current environment. Always --no-prompt, never -A, never FFI. Tools do not run in this
# process: file tools run in a worker confined to the sandbox profile, shell commands in
# bubblewrap (see ARCHITECTURE.md). So this process writes only tern's home (audit log,
# sessions) and the temp directory (the run's private tmp). It starts bwrap, bash (for
# --no-sandbox and :danger-full-access) and Deno itself (the worker), but --allow-run stays
# whole: Deno.kill of a process group needs it, and any --allow-run=X can run anything anyway.
# Reading stays broad (the workspace may be anywhere: -C), and so does the network: the
# model's host comes from config files this launcher does not parse.
# --unstable-lazy-dynamic-imports: without it Deno loads every module any `import()` names
# before main.ts starts, i.e. every command's code for every command (measured: 128 ms of the
# interactive start, half of `--version`).
# TERN_EXTRA_ENV: more names (comma-separated, `*` allowed at the end) tern may read, for
# `${VAR}` references in MCP server definitions; names of other characters are ignored.
tern_deno_flags() {
  local names="$TERN_ENV_NAMES"
  if [[ -n "${TERN_EXTRA_ENV:-}" ]]; then
    if [[ "$TERN_EXTRA_ENV" =~ ^[A-Za-z_][A-Za-z0-9_]*\*?(,[A-Za-z_][A-Za-z0-9_]*\*?)*$ ]]; then
      names+=",$TERN_EXTRA_ENV"
    else
      echo "tern: ignoring TERN_EXTRA_ENV=\"$TERN_EXTRA_ENV\": expected names like GITHUB_TOKEN,MY_*" >&2
    fi
  fi
  local home="${TERN_HOME:-${HOME:-/nonexistent}/.tern}"
  case "$home" in /*) ;; *) home="$PWD/$home" ;; esac
  local tmp="${TMPDIR:-/tmp}"
  TERN_DENO_FLAGS=(
    --no-prompt
    --quiet
    --unstable-lazy-dynamic-imports
    --allow-read
    "--allow-write=$home,$tmp"
    --allow-net
    "--allow-env=$names"
    --allow-run
    --allow-sys=osRelease,homedir,hostname,uid,gid
  )
}
