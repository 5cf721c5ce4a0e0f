#!/usr/bin/env bash
# Entry point for a fresh checkout: finds or installs Deno (into .tools/), prepares what the task
# needs (bin/setup: system programs, Deno's cache, the test servers), then `deno task "$@"`.
#   ./run.sh demo      offline demo
#   ./run.sh test      test suite
#   ./run.sh install   put `tern` on your PATH
#   ./run.sh verify    static checks, tests, demo and the scenario benchmark; one summary line
#   ./run.sh --version (or any other flag), a tern command (./run.sh run "task", ./run.sh
#   doctor), or no argument: tern itself, in the current folder
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/bin/_env.sh"
deno_bin="$(find_deno)"
export PATH="$(dirname "$deno_bin"):$PATH"
# In the folder it was started in: install (a relative --root is that folder's), and tern itself,
# as installed, for no argument, a flag or any word that is not one of deno.json's tasks (a
# mistyped task gets tern's answer, which names the command meant).
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
