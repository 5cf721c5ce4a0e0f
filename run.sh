#!/bin/sh
# Entry point for a fresh checkout: finds or installs Deno (into .tools/), prepares what the task
# needs (bin/setup: system programs, Deno's cache, the test servers), then `deno task "$@"`.
#   ./run.sh demo      offline demo
#   ./run.sh test      test suite
#   ./run.sh install   put `tern` on your PATH
#   ./run.sh verify    static checks, tests, demo and the scenario benchmark; one summary line
#   ./run.sh --version (or any other flag), a tern command (./run.sh run "task", ./run.sh
#   doctor), or no argument: tern itself, in the current folder
# In the folder it was started in: tern itself, as installed, for no argument, a flag or any word
# that is not one of deno.json's tasks (a mistyped task gets tern's answer, which names the
# command meant). Started as sh, with no program before bin/tern: that folder may be a
# repository, and `#!/usr/bin/env bash`, `dirname` or `readlink` would be looked up in PATH, whose
# entries may lead there (a relative one, an activated .venv/bin); bin/tern takes its programs
# from the other entries only. (run.sh reached through a link needs readlink, further down.)
case "${1:--}" in
  install | demo | test | check | verify | start | bench | compile | check:static | bench:scenarios) ;;
  *)
    case $0 in */*) _tern_run_sh=$0 ;; *) _tern_run_sh=./$0 ;; esac
    [ -L "$_tern_run_sh" ] || exec "${_tern_run_sh%/*}/bin/tern" "$@"
    ;;
esac
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/bin/_env.sh"
deno_bin="$(find_deno)"
export PATH="$(dirname "$deno_bin"):$PATH"
# In the folder it was started in too: install (a relative --root is that folder's).
case "${1:--}" in
  install) shift; exec "$TERN_ROOT/bin/install" "$@" ;;
  demo | test | check | verify | start | bench | compile | check:static | bench:scenarios) ;;
  *) exec "$TERN_ROOT/bin/tern" "$@" ;;
esac
cd "$TERN_ROOT"
case "$1" in
  demo | test | check) "$TERN_ROOT/bin/setup" ;;
  verify) "$TERN_ROOT/bin/setup"; exec "$TERN_ROOT/bin/verify" ;;
esac
exec "$deno_bin" task "$@"
