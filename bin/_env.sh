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

# The main process's declared permissions: always --no-prompt, never -A.
# Tool calls are confined further by the sandbox (see ARCHITECTURE.md).
TERN_DENO_FLAGS=(
  --no-prompt
  --quiet
  --allow-read
  --allow-write
  --allow-net
  --allow-env
  --allow-run
  --allow-sys=osRelease,homedir,hostname,uid,gid
)
