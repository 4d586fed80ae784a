#!/usr/bin/env bash
# Set everything up (idempotent) and run the whole test suite: style, pure cores, graph tests.
# Extra arguments go to pytest, e.g.  bash scripts/test.sh -k multirotor -x
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
# shellcheck disable=SC1091
. "$ROOT/env.sh"
cd "$ROOT/aerosim"
exec python -m pytest -p no:cacheprovider "$@"
