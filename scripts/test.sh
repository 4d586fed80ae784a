#!/usr/bin/env bash
# Set everything up (idempotent) and run the test suite.
#   bash scripts/test.sh           the whole suite: style, pure cores, graph tests (what CI runs)
#   bash scripts/test.sh --fast    the inner loop: the pure, fast tests, about 90 s on 2 cores
#                                  (-m "not graph and not slow and not install"; the markers
#                                  are set in aerosim/test/conftest.py)
# Other arguments go to pytest, e.g.  bash scripts/test.sh -k multirotor -x
#                                     bash scripts/test.sh --fast test/test_fc.py
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
args=()
for a in "$@"; do
  if [ "$a" = --fast ]; then
    args+=(-m 'not graph and not slow and not install')
  else
    args+=("$a")
  fi
done
bash "$ROOT/scripts/setup.sh"
# shellcheck disable=SC1091
. "$ROOT/env.sh"
cd "$ROOT/aerosim"
exec python -m pytest -p no:cacheprovider ${args[@]+"${args[@]}"}
