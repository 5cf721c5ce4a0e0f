# Shared by run.sh and bin/*: finds a Deno >= 2.9 and declares the main process's permissions.
# Sourced, not executed.
# Without a subshell: each one is a fork, milliseconds on every start.
_tern_bin_dir="${BASH_SOURCE[0]%/*}"
[[ "${BASH_SOURCE[0]}" == */* ]] || _tern_bin_dir="."
[[ "$_tern_bin_dir" == /* ]] || _tern_bin_dir="$PWD/$_tern_bin_dir"
_tern_bin_dir="${_tern_bin_dir%/.}"
TERN_ROOT="${_tern_bin_dir%/bin}"
[[ "$TERN_ROOT" != "$_tern_bin_dir" ]] || TERN_ROOT="$_tern_bin_dir/.."
TERN_DENO_VERSION="2.9.6"
# Where find_deno installs the pinned Deno.
TERN_PINNED_DENO="$TERN_ROOT/.tools/node_modules/@deno/linux-x64-glibc/deno"

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
  local local_bin="$TERN_PINNED_DENO"
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

# Hosts of the provider presets (src/llm/presets.ts; a test keeps the two lists equal). The
# local servers are granted on their own port only.
TERN_PRESET_HOSTS="api.openai.com,api.anthropic.com,openrouter.ai"
TERN_PRESET_HOSTS+=",127.0.0.1:11434,127.0.0.1:1234,127.0.0.1:8000,127.0.0.1:8080"

# _tern_hosts_in TEXT: appends to _tern_hosts the host (with its port, when given) of every
# http(s) URL in TEXT.
_tern_hosts_in() {
  local rest="$1" host
  local url_re='[hH][tT][tT][pP][sS]?://([^/?#"'"'"' ,;}<>\\]+)(.*)'
  while [[ "$rest" =~ $url_re ]]; do
    host="${BASH_REMATCH[1]##*@}"
    rest="${BASH_REMATCH[2]}"
    [[ "$host" =~ ^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]+)?$ ]] && _tern_hosts+=",$host"
  done
}

# tern_net_hosts ARGS...: sets TERN_NET_HOSTS, the hosts tern's process may connect to: the
# presets', and those of every http(s) URL in tern's environment variables, in ARGS (the
# command line, e.g. --base-url) and in the configuration files tern reads for the workspace
# (the current directory or -C/--cwd): the user's and the project's config.jsonc, the
# project's .env and every MCP file. TERN_EXTRA_HOSTS adds more (comma-separated host or
# host:port), e.g. for an MCP URL written as ${VAR}.
tern_net_hosts() {
  local ws="$PWD" prev="" arg name
  for arg in "$@"; do
    case "$prev" in -C | --cwd) ws="$arg" ;; esac
    case "$arg" in --cwd=*) ws="${arg#--cwd=}" ;; -C?*) ws="${arg#-C}" ;; esac
    prev="$arg"
  done
  case "$ws" in /*) ;; *) ws="$PWD/$ws" ;; esac
  local home="${TERN_HOME:-${HOME:-/nonexistent}/.tern}"
  case "$home" in /*) ;; *) home="$ws/$home" ;; esac
  _tern_hosts="$TERN_PRESET_HOSTS"
  for name in ${!TERN_@} ${!OPENAI_@} ${!ANTHROPIC_@} ${!OPENROUTER_@}; do
    _tern_hosts_in "${!name}"
  done
  for arg in "$@"; do _tern_hosts_in "$arg"; done
  local file line
  for file in "$home/config.jsonc" "$home/mcp.json" "$home"/mcp/*.json "$ws/.tern/config.jsonc" \
    "$ws/.env" "$ws/.mcp.json" "$ws/.tern/mcp.json" "$ws"/.tern/mcp/*.json; do
    [[ -f "$file" && -r "$file" ]] || continue
    while IFS= read -r line || [[ -n "$line" ]]; do
      [[ "$line" == *[hH][tT][tT][pP]* ]] && _tern_hosts_in "$line"
    done <"$file"
  done
  if [[ -n "${TERN_EXTRA_HOSTS:-}" ]]; then
    if [[ "$TERN_EXTRA_HOSTS" =~ ^[A-Za-z0-9.:-]+(,[A-Za-z0-9.:-]+)*$ ]]; then
      _tern_hosts+=",$TERN_EXTRA_HOSTS"
    else
      echo "tern: ignoring TERN_EXTRA_HOSTS=\"$TERN_EXTRA_HOSTS\": expected hosts like example.com,10.0.0.5:8080" >&2
    fi
  fi
  TERN_NET_HOSTS="$_tern_hosts"
}

# tern_deno_flags ARGS...: sets TERN_DENO_FLAGS, the main process's permissions, for the
# current environment and the command line ARGS. Always --no-prompt, never -A, never FFI.
# Tools do not run in this process: file tools run in a worker confined to the sandbox
# profile, shell commands in bubblewrap (see ARCHITECTURE.md). So this process writes only
# tern's home (audit log, sessions) and the temp directory (the run's private tmp), and
# connects only to the hosts tern_net_hosts finds: a dependency gone bad cannot send what it
# reads anywhere else. It starts bwrap, bash (for --no-sandbox and :danger-full-access) and
# Deno itself (the worker), but --allow-run stays whole: Deno.kill of a process group needs
# it, and any --allow-run=X can run anything anyway. Reading stays broad: the workspace may be
# anywhere, and hiding secret locations from shell commands means looking at them.
# --unstable-lazy-dynamic-imports: without it Deno loads every module any `import()` names
# before main.ts starts, i.e. every command's code for every command (measured: 128 ms of the
# interactive start, half of `--version`).
# TERN_EXTRA_ENV: more names (comma-separated, `*` allowed at the end) tern may read, for
# `${VAR}` references in MCP server definitions; names of other characters are ignored.
# V8's young generation kept small (2 MB semi-spaces instead of growing to 16-32 MB): what
# survives a scavenge moves on sooner instead of filling fresh pages, and fresh memory is what
# loading a long session costs most here (bench/results/sessions.md: 10,000 entries load in
# about 30 % less time, touching about 30 % less memory).
TERN_V8_FLAGS="--max-semi-space-size=2"

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
  tern_net_hosts "$@"
  TERN_DENO_FLAGS=(
    --no-prompt
    --quiet
    --unstable-lazy-dynamic-imports
    "--v8-flags=$TERN_V8_FLAGS"
    --allow-read
    "--allow-write=$home,$tmp"
    "--allow-net=$TERN_NET_HOSTS"
    "--allow-env=$names"
    --allow-run
    --allow-sys=osRelease,homedir,hostname,uid,gid
  )
}
