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
# Deno's cache for tern's own process and its tool worker (transpiled modules, V8's code cache,
# npm metadata), kept in the checkout so that it does not follow HOME: a run with another HOME
# (a test's, a sandboxed one's) finds it filled instead of downloading npm metadata and compiling
# every module again. A DENO_DIR in the environment wins where it lies outside the workspace
# (bin/tern). bin/setup and bin/build fill it.
TERN_DENO_DIR="$TERN_ROOT/.tools/deno"
# Deno looks for a newer release of itself (a request to its download host) unless told not to:
# a run reaches no host but the model's. Exported for every Deno this checkout starts.
export DENO_NO_UPDATE_CHECK=1
# deno_platform_package [OS] [MACHINE]: the npm package of the deno npm package that holds the
# binary for this machine (default: uname's), e.g. linux-x64-glibc or darwin-arm64; empty when
# Deno publishes none for it.
deno_platform_package() {
  local os="${1:-$(uname -s)}" machine="${2:-$(uname -m)}"
  case "$os/$machine" in
    Linux/x86_64 | Linux/amd64) echo "linux-x64-glibc" ;;
    Linux/aarch64 | Linux/arm64) echo "linux-arm64-glibc" ;;
    Darwin/x86_64) echo "darwin-x64" ;;
    Darwin/arm64 | Darwin/aarch64) echo "darwin-arm64" ;;
    *) echo "" ;;
  esac
}
# Where find_deno installs the pinned Deno (Linux x64 needs no uname: the common case costs no
# process start on every command).
case "$OSTYPE/$HOSTTYPE" in
  linux*/x86_64) _tern_deno_package="linux-x64-glibc" ;;
  *) _tern_deno_package="$(deno_platform_package)" ;;
esac
TERN_PINNED_DENO="$TERN_ROOT/.tools/node_modules/@deno/${_tern_deno_package:-unsupported}/deno"

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
  if [ -z "$_tern_deno_package" ]; then
    echo "tern: no deno >= 2.9 on PATH, and Deno publishes no npm build for $(uname -s) $(uname -m): install Deno $TERN_DENO_VERSION yourself" >&2
    return 1
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
# for the tool worker, one that a dependency (tinyglobby) reads when it loads, and the proxy and
# CA variables.
TERN_ENV_NAMES="HOME,PATH,USER,LANG,LC_ALL,LC_CTYPE,LC_MESSAGES,TERM,TZ,TMPDIR,NO_COLOR"
TERN_ENV_NAMES+=",TERN_*,OPENAI_*,ANTHROPIC_*,OPENROUTER_*,VLLM_API_KEY"
TERN_ENV_NAMES+=",SSH_AUTH_SOCK,DOCKER_HOST,GPG_AGENT_INFO"
TERN_ENV_NAMES+=",DENO_DIR,XDG_CACHE_HOME,TINYGLOBBY_DEBUG"
# vscode-jsonrpc (the language servers' client) reads it while loading.
TERN_ENV_NAMES+=",XDG_RUNTIME_DIR"
# The ws package (the Responses API over WebSocket) reads these two switches while loading:
# without them its import fails and every round goes over HTTP.
TERN_ENV_NAMES+=",WS_NO_BUFFER_UTIL,WS_NO_UTF_8_VALIDATE"
# The yaml package (skill and template frontmatter) reads these two debug switches.
TERN_ENV_NAMES+=",LOG_TOKENS,LOG_STREAM"
# Proxy and CA variables (src/sandbox/shell_env.ts NETWORK_ENV_NAMES; a test keeps the two equal):
# passed to commands that have the network and to MCP servers.
TERN_ENV_NAMES+=",HTTP_PROXY,HTTPS_PROXY,NO_PROXY,SSL_CERT_FILE,SSL_CERT_DIR,NODE_EXTRA_CA_CERTS"
TERN_ENV_NAMES+=",DENO_CERT,REQUESTS_CA_BUNDLE,CURL_CA_BUNDLE"
TERN_ENV_NAMES+=",http_proxy,https_proxy,no_proxy,ssl_cert_file,ssl_cert_dir,node_extra_ca_certs"
TERN_ENV_NAMES+=",deno_cert,requests_ca_bundle,curl_ca_bundle"

# Hosts of the provider presets (src/llm/presets.ts; a test keeps the two lists equal). The
# local servers are granted on their own port only.
TERN_PRESET_HOSTS="api.openai.com,api.anthropic.com,openrouter.ai"
TERN_PRESET_HOSTS+=",127.0.0.1:11434,127.0.0.1:1234,127.0.0.1:8000,127.0.0.1:8080"

# _tern_hosts_in TEXT: appends to _tern_hosts the host (with its port, when given) of every
# http(s) URL in TEXT: only a name of non-empty labels (or a bracketed IPv6 address) with a port
# from 1 to 65535, which Deno takes (it refuses to start on `a..b` or `:99999999`), and at most
# _TERN_MAX_HOSTS of them (a list too long for one argument stops Deno from starting too).
_TERN_MAX_HOSTS=200
_tern_host_count=0
_tern_hosts_in() {
  local rest="$1" host
  local url_re='[hH][tT][tT][pP][sS]?://([^/?#"'"'"' ,;}<>\\]+)(.*)'
  local host_re='^([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])(:([0-9]{1,5}))?$'
  while [[ "$rest" =~ $url_re ]]; do
    host="${BASH_REMATCH[1]##*@}"
    rest="${BASH_REMATCH[2]}"
    ((_tern_host_count < _TERN_MAX_HOSTS)) || return 0
    if [[ ${#host} -le 260 && "$host" =~ $host_re ]]; then
      if [[ -z "${BASH_REMATCH[4]}" ]] || ((10#${BASH_REMATCH[4]} >= 1 && 10#${BASH_REMATCH[4]} <= 65535)); then
        _tern_hosts+=",$host"
        _tern_host_count=$((_tern_host_count + 1))
      fi
    fi
  done
}

# _tern_may_read NAME: true when NAME is one of the variables tern may read (_tern_env_names,
# the comma list given to --allow-env, `PREFIX*` entries included).
_tern_may_read() {
  local entry
  local -a entries
  # Read, not word-split: an entry `MY_*` must not be matched against file names.
  IFS=, read -ra entries <<<"${_tern_env_names:-$TERN_ENV_NAMES}"
  for entry in "${entries[@]}"; do
    if [[ "$entry" == *"*" ]]; then
      [[ "$1" == "${entry%\*}"* ]] && return 0
    elif [[ "$1" == "$entry" ]]; then
      return 0
    fi
  done
  return 1
}

# _tern_url_value TEXT: appends the host of TEXT when all of it is one http(s) URL, after
# expanding a whole-value ${NAME} or ${NAME:-default} from tern's environment (as MCP files
# write it).
_tern_url_value() {
  local value="$1"
  if [[ "$value" =~ ^\$\{([A-Za-z_][A-Za-z0-9_]*)(:-(.*))?\}$ ]]; then
    local name="${BASH_REMATCH[1]}" fallback="${BASH_REMATCH[3]}"
    # Only a variable tern may read itself: any other is not expanded by tern either, and would
    # grant a host it never connects to.
    if _tern_may_read "$name"; then value="${!name:-$fallback}"; else value="$fallback"; fi
  fi
  # An `if`, not `&&`: bin/tern runs with `set -e`, and a function whose last command fails
  # (no URL here) would end the launcher.
  if [[ "$value" =~ ^[hH][tT][tT][pP][sS]?://[^[:space:]]+$ ]]; then _tern_hosts_in "$value"; fi
}

# _tern_json_urls FILE MODE: adds the hosts of the URL settings tern uses in one JSONC file,
# found by reading its structure (strings, nesting, comments), never by looking for text that
# resembles a URL: MODE "user" takes `baseUrl` and `providers.<name>.baseUrl`, "project" only
# `baseUrl` (a project may not define providers), "mcp" the `url` of each server under
# `servers` or `mcpServers`. A key given twice counts once, its last value. A file tern would
# reject anyway (a syntax error, a key given twice) may add hosts tern never uses: they get no key.
_tern_json_urls() {
  local LC_ALL=C seg c skip i n depth=0 expect_key=0 in_string=0 value path comment="" odd
  # What comes before the next significant character, found by a regular expression: a glob
  # removal (`${seg%%[...]*}`) costs the square of a part's length when none follows.
  local insignificant='^[^][{}:,/]*'
  local -a parts=() keys=() kinds=()
  local -A found=()
  # Characters bash may look at outside strings: each step there copies what is left of a part,
  # so a part with many brackets and no quote (`{[][][]…}`, a small file a repository can hold)
  # costs the square of its length. Real files use a tiny share of this (their parts are
  # short); a file that uses it up loses the URLs past that point, like one of more than 20,000
  # parts. Every other step is linear in the part it reads.
  local budget=2000000
  # Split at the quotes: outside and inside of strings alternate, except where a quote is
  # escaped (the part before it ends in an odd run of backslashes: joined again below) or a
  # comment holds one (skipped below). At most 20,000 parts (about half a second here): a file
  # of more loses the URLs past them (tern then names the host it may not reach), never the
  # start-up.
  mapfile -d '"' -t -n 20000 parts <"$1"
  n=${#parts[@]}
  for ((i = 0; i < n && budget > 0; i++)); do
    seg="${parts[i]}"
    if [[ -n "$comment" ]]; then
      # Inside a comment that a quote split: it goes on until its end marker.
      if [[ "$comment" == line && "$seg" == *$'\n'* ]]; then
        skip="${seg%%$'\n'*}"
        seg="${seg:${#skip}+1}"
      elif [[ "$comment" == block && "$seg" == *"*/"* ]]; then
        skip="${seg%%\*/*}"
        seg="${seg:${#skip}+2}"
      else
        continue
      fi
      comment=""
    elif ((in_string)); then
      in_string=0
      value="$seg"
      # A quote is escaped when the part before it ends in an odd run of backslashes: with
      # every pair removed, the part then still ends in one (a pattern of fixed length, so
      # linear; a regular expression anchored at the end is not).
      # Past 8 KiB a string is no key or URL tern uses: it is only read to its end (joining
      # more would copy it whole for every escaped quote).
      odd="${seg//\\\\/}"
      while [[ "$odd" == *\\ ]] && ((i + 1 < n)); do
        i=$((i + 1))
        ((${#value} > 8192)) || value+="\"${parts[i]}"
        odd="${parts[i]//\\\\/}"
      done
      ((${#value} <= 8192)) || value=""
      if [[ "${kinds[depth]}" == "{" && $expect_key == 1 ]]; then
        keys[depth]="$value"
      elif [[ "${kinds[depth]}" == "{" && $depth -le 3 ]]; then
        path=""
        for ((c = 1; c <= depth; c++)); do
          [[ "${kinds[c]}" == "{" ]] || { path=""; break; }
          path+="/${keys[c]}"
        done
        case "$2:$path" in
          user:/baseUrl | user:/providers/*/baseUrl | user:/indexEmbeddings/baseUrl | \
            project:/baseUrl | mcp:/servers/*/url | mcp:/mcpServers/*/url)
            found["$path"]="${value//\\\//\/}"
            ;;
        esac
      fi
      continue
    fi
    # Outside strings: jump from one significant character to the next.
    while ((budget > 0)); do
      budget=$((budget - ${#seg}))
      [[ "$seg" =~ $insignificant ]]
      skip="${BASH_REMATCH[0]}"
      seg="${seg:${#skip}}"
      [[ -n "$seg" ]] || break
      c="${seg:0:1}"
      seg="${seg:1}"
      case "$c" in
        "{" | "[")
          depth=$((depth + 1))
          kinds[depth]="$c"
          keys[depth]=""
          [[ "$c" == "{" ]] && expect_key=1 || expect_key=0
          ;;
        "}" | "]")
          ((depth > 0)) && depth=$((depth - 1))
          expect_key=0
          ;;
        ",") [[ "${kinds[depth]}" == "{" ]] && expect_key=1 ;;
        ":") expect_key=0 ;;
        "/")
          # To a comment's end by the longest suffix from its first end marker: removing the
          # shortest prefix up to one instead (`${seg#*…}`) costs the square of the length.
          if [[ "${seg:0:1}" == "/" ]]; then
            if [[ "$seg" == *$'\n'* ]]; then
              skip="${seg%%$'\n'*}"
              seg="${seg:${#skip}+1}"
            else
              comment=line
              break
            fi
          elif [[ "${seg:0:1}" == "*" ]]; then
            seg="${seg:1}"
            if [[ "$seg" == *"*/"* ]]; then
              skip="${seg%%\*/*}"
              seg="${seg:${#skip}+2}"
            else
              comment=block
              break
            fi
          fi
          ;;
      esac
    done
    # The quote that ended this part opens a string, unless a comment swallowed it.
    [[ -n "$comment" ]] || in_string=1
  done
  for value in "${found[@]}"; do _tern_url_value "$value"; done
}

# _tern_dotenv_url FILE: adds the host of the base URL a .env file sets (TERN_BASE_URL, else
# OPENAI_BASE_URL; the last assignment wins), and nothing else written in it.
_tern_dotenv_url() {
  local line tern="" openai="" value
  local re='^[[:space:]]*(export[[:space:]]+)?(TERN_BASE_URL|OPENAI_BASE_URL)[[:space:]]*=[[:space:]]*(.*)$'
  # A value whose quote does not close on its line goes on to the next line that holds that
  # quote, as tern's reader takes it (src/config/_dotenv_lines.ts): those lines are the value,
  # never assignments, so `NOTE="` over a `TERN_BASE_URL=` line adds no host tern will not use.
  local opens='^[[:space:]]*(export[[:space:]]+)?[^=[:space:]]+[[:space:]]*=[[:space:]]*(["'"'"'`])(.*)$'
  local rest quote=""
  while IFS= read -r line || [[ -n "$line" ]]; do
    if [[ -n "$quote" ]]; then
      [[ "$line" == *"$quote"* ]] && quote=""
      continue
    fi
    # Linear in the line (ERE, and a pattern with `*` at both ends), whatever its length.
    if [[ "$line" =~ $opens && "${BASH_REMATCH[3]}" != *"${BASH_REMATCH[2]}"* ]]; then
      quote="${BASH_REMATCH[2]}"
      continue
    fi
    # No URL is this long; and each step below stays linear in the line (a suffix pattern
    # that starts with `*` is not: a line of 30,000 spaces took a minute).
    ((${#line} <= 8192)) || continue
    [[ "$line" =~ $re ]] || continue
    value="${BASH_REMATCH[3]}"
    case "$value" in
      \"*) value="${value#\"}" value="${value%%\"*}" ;;
      \'*) value="${value#\'}" value="${value%%\'*}" ;;
      *)
        # Unquoted: the first word, when only blanks or a comment follow it. (The first word by
        # the longest suffix from the first blank, the rest by its length: removing the
        # shortest prefix up to a blank, `${value#*[[:space:]]}`, costs the square again.)
        rest="${value%%[[:space:]]*}"
        value="${value:${#rest}}"
        value="${value//[[:space:]]/}"
        if [[ -z "$value" || "$value" == "#"* ]]; then value="$rest"; else value=""; fi
        ;;
    esac
    [[ "${BASH_REMATCH[2]}" == TERN_BASE_URL ]] && tern="$value" || openai="$value"
  done <"$1"
  _tern_url_value "${tern:-$openai}"
}

# tern_net_hosts ARGS...: sets TERN_NET_HOSTS, the hosts tern's process may connect to: the
# presets', the base URL of tern's environment (TERN_BASE_URL, OPENAI_BASE_URL) and of the
# command line (--base-url), and the URL settings of the configuration files tern reads for the
# workspace (the current directory or -C/--cwd): `baseUrl` (and the user's providers' and
# `indexEmbeddings`') in the user's and the project's config.jsonc, the base URL the project's .env sets, and each MCP
# server's `url` in every MCP file. Only settings tern uses count, never text that merely looks
# like a URL (a comment, an unused key, a task's words). TERN_EXTRA_HOSTS adds more
# (comma-separated host or host:port). A host a project's file names gets none of the person's
# keys (src/config/load.ts), and each project file counts only when it is a regular file (as
# tern reads it: src/config/workspace_file.ts).
tern_net_hosts() {
  local ws="$PWD" prev="" arg
  _tern_hosts=""
  for arg in "$@"; do
    case "$prev" in -C | --cwd) ws="$arg" ;; --base-url) _tern_url_value "$arg" ;; esac
    # After "--" come the task's words, not options (tern reads them so too).
    [[ "$arg" != "--" ]] || break
    case "$arg" in
      --cwd=*) ws="${arg#--cwd=}" ;;
      -C?*) ws="${arg#-C}" ;;
      --base-url=*) _tern_url_value "${arg#--base-url=}" ;;
    esac
    prev="$arg"
    # Short switches run together take the next word for the last one: `-cC DIR` is `-c -C DIR`.
    case "$arg" in --*) ;; -?*C) prev=-C ;; esac
  done
  case "$ws" in /*) ;; *) ws="$PWD/$ws" ;; esac
  _tern_workspace="$ws"
  local home="${TERN_HOME:-${HOME:-/nonexistent}/.tern}"
  case "$home" in /*) ;; *) home="$ws/$home" ;; esac
  _tern_hosts="$TERN_PRESET_HOSTS$_tern_hosts"
  _tern_url_value "${TERN_BASE_URL:-${OPENAI_BASE_URL:-}}"
  local file
  _tern_readable "$home/config.jsonc" && _tern_json_urls "$home/config.jsonc" user
  for file in "$home/mcp.json" "$home"/mcp/*.json; do
    _tern_readable "$file" && _tern_json_urls "$file" mcp
  done
  if [[ "$ws/.tern" != "$home" && ! -L "$ws/.tern" ]]; then
    _tern_project_file "$ws/.tern/config.jsonc" && _tern_json_urls "$ws/.tern/config.jsonc" project
    _tern_project_file "$ws/.tern/mcp.json" && _tern_json_urls "$ws/.tern/mcp.json" mcp
    if [[ ! -L "$ws/.tern/mcp" ]]; then
      for file in "$ws"/.tern/mcp/*.json; do
        _tern_project_file "$file" && _tern_json_urls "$file" mcp
      done
    fi
  fi
  _tern_project_file "$ws/.mcp.json" && _tern_json_urls "$ws/.mcp.json" mcp
  _tern_project_file "$ws/.env" && _tern_dotenv_url "$ws/.env"
  if [[ -n "${TERN_EXTRA_HOSTS:-}" ]]; then
    if [[ "$TERN_EXTRA_HOSTS" =~ ^[A-Za-z0-9.:-]+(,[A-Za-z0-9.:-]+)*$ ]]; then
      _tern_hosts+=",$TERN_EXTRA_HOSTS"
    else
      echo "tern: ignoring TERN_EXTRA_HOSTS=\"$TERN_EXTRA_HOSTS\": expected hosts like example.com,10.0.0.5:8080" >&2
    fi
  fi
  TERN_NET_HOSTS="$_tern_hosts"
}

# _tern_readable FILE: a readable regular file (symlinks followed: the person's own files).
_tern_readable() { [[ -f "$1" && -r "$1" ]]; }

# _tern_project_file FILE: a readable regular file that is no symlink (the caller checks the
# folders below the workspace) and holds at most 1 MiB: tern refuses more (a symlink out of the
# workspace, a hard link, a swap while reading: src/config/workspace_file.ts), on the reading
# itself, and reads no larger file. Its size is asked of `wc -c`, which reads none of a regular
# file: the launcher reads a file whole, and a repository's 1 GB `.mcp.json` held it 5 minutes
# at 7 GB (bash's `read -N` would not do: it skips NUL bytes, so a sparse file is read whole).
_tern_project_file() {
  [[ -f "$1" && -r "$1" && ! -L "$1" ]] || return 1
  local size
  size="$(wc -c <"$1" 2>/dev/null)" || return 1
  ((size <= 1048576))
}

# tern_deno_flags ARGS...: sets TERN_DENO_FLAGS, the main process's permissions, for the
# current environment and the command line ARGS. Always --no-prompt, never -A, never FFI.
# Tools do not run in this process: file tools run in a worker confined to the sandbox
# profile, shell commands in bubblewrap (see ARCHITECTURE.md). So this process writes only
# tern's home (audit log, sessions), the temp directory (the run's private tmp) and the
# workspace's `.tern/memory` (the topic files memory consolidation writes: src/context/
# consolidate.ts, which refuses a symlinked `.tern` or `.tern/memory`), and
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
# --no-lazy: every function compiled when its module loads, so V8's code cache (which holds what
# was compiled by then) has them all, and a run no longer compiles again each function first
# called after its module loaded (most of round 1's: the loop, the sandbox, bash). Measured in
# interleaved runs of the bash scenario (bench/results/first_request_limits.md): round 1 0.90,
# whole run 0.95, CPU 0.95, the interactive prompt 0.96, the first request unchanged (0.98);
# the largest process of a 40-round bash run about 3.5 MB larger (73 MB).
# --liftoff-only: wasm (tree-sitter's bash grammar, which reads every command that is not a plain
# word list, a redirect included) stays in V8's baseline compiler. Tiered up, its hot functions
# were recompiled by TurboFan on the second core for about 200 ms of CPU in a run's first
# commands, and the compiled code took about 70 MB: a 40-round session of `echo … > file` peaked
# at 160 MB against 88 MB, its rounds took 0.65× as long (bench/results/first_request_limits.md),
# and a command's parse is no slower (under a millisecond either way). The code index parses in a
# process of its own (code_index_parser.ts), with its own flags and the optimizing tier.
# Changing these flags makes V8 reject the code cache made under others: the next run of each
# module compiles again.
TERN_V8_FLAGS="--max-semi-space-size=2,--no-lazy,--liftoff-only"

# tern_entry: sets TERN_ENTRY, the module bin/tern starts: the bundle of bin/build
# (.tools/bundle/main.js) while nothing it was built from is newer than its stamp (main.ts,
# deno.json, deno.lock, and every file and folder under src/, so a file added or removed counts
# too), else main.ts. TERN_NO_BUNDLE=1 always starts main.ts. Bash's own tests, no process.
tern_entry() {
  TERN_ENTRY="$TERN_ROOT/main.ts"
  local bundle="$TERN_ROOT/.tools/bundle" file
  [[ -z "${TERN_NO_BUNDLE:-}" && -f "$bundle/stamp" && -f "$bundle/main.js" ]] || return 0
  shopt -s globstar
  for file in "$TERN_ROOT"/{main.ts,deno.json,deno.lock,src,src/**}; do
    if [[ "$file" -nt "$bundle/stamp" ]]; then
      shopt -u globstar
      return 0
    fi
  done
  shopt -u globstar
  TERN_ENTRY="$bundle/main.js"
}

tern_deno_flags() {
  local names="$TERN_ENV_NAMES"
  if [[ -n "${TERN_EXTRA_ENV:-}" ]]; then
    if [[ "$TERN_EXTRA_ENV" =~ ^[A-Za-z_][A-Za-z0-9_]*\*?(,[A-Za-z_][A-Za-z0-9_]*\*?)*$ ]]; then
      names+=",$TERN_EXTRA_ENV"
    else
      echo "tern: ignoring TERN_EXTRA_ENV=\"$TERN_EXTRA_ENV\": expected names like GITHUB_TOKEN,MY_*" >&2
    fi
  fi
  _tern_env_names="$names"
  local tmp="${TMPDIR:-/tmp}"
  tern_net_hosts "$@"
  # Relative, tern's home lies in the workspace, as tern itself reads it (resolveTernHome).
  local home="${TERN_HOME:-${HOME:-/nonexistent}/.tern}"
  case "$home" in /*) ;; *) home="$_tern_workspace/$home" ;; esac
  # Deno splits a permission list at commas: a workspace whose path holds one would grant a
  # path cut from it, so it gets no memory folder (consolidation then says it cannot write).
  local memory=",$_tern_workspace/.tern/memory"
  [[ "$_tern_workspace" != *,* ]] || memory=""
  # tern's home and the temp folder it must write: a comma in either would grant the parts
  # (`/tmp/a,/home`), so tern does not start.
  local what
  for what in "TERN_HOME (or HOME):$home" "TMPDIR:$tmp"; do
    if [[ "${what#*:}" == *,* ]]; then
      echo "tern: ${what%%:*} \"${what#*:}\" holds a comma, which Deno's permission lists cannot:" \
        "set ${what%%:*} to a folder without one" >&2
      exit 2
    fi
  done
  TERN_DENO_FLAGS=(
    --no-prompt
    --quiet
    --unstable-lazy-dynamic-imports
    "--v8-flags=$TERN_V8_FLAGS"
    --allow-read
    "--allow-write=$home,$tmp$memory"
    "--allow-net=$TERN_NET_HOSTS"
    "--allow-env=$names"
    --allow-run
    # networkInterfaces: the web tools' guard refuses this machine's own addresses (a compiled
    # binary's request process is the binary itself, with these permissions).
    --allow-sys=osRelease,homedir,hostname,uid,gid,networkInterfaces
  )
}
