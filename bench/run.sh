#!/usr/bin/env bash
# Set up (idempotent), install the benchmark peers, run every benchmark; figures go to stdout.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
# shellcheck disable=SC1091
. "$ROOT/env.sh"
python -m pip install -q --disable-pip-version-check -r "$ROOT/bench/requirements.txt" \
  -c "$ROOT/constraints.txt" 2>&1 | { grep -v '^WARNING: Location .* is ignored' || true; }
cd "$ROOT/bench"
for b in bench_*.py; do
  echo "=== $b"
  python "$b"
done
