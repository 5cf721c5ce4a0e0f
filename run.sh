#!/usr/bin/env bash
# Entry point for a fresh checkout: finds or installs Deno (into .tools/), then `deno task "$@"`.
#   ./run.sh demo      offline demo
#   ./run.sh test      test suite
#   ./run.sh install   put `tern` on your PATH
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/bin/_env.sh"
deno_bin="$(find_deno)"
export PATH="$(dirname "$deno_bin"):$PATH"
cd "$TERN_ROOT"
if [ "$#" -eq 0 ]; then set -- start; fi
if [ "$1" = "install" ]; then shift; exec "$TERN_ROOT/bin/install" "$@"; fi
exec "$deno_bin" task "$@"
