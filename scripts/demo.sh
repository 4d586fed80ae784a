#!/usr/bin/env bash
# Set everything up (idempotent) and run the main job: the sim_quad graph, headless, for
# AEROSIM_DEMO_SECONDS sim seconds (default 10); prints what every topic published, then stops.
# Extra arguments are launch arguments, e.g.  bash scripts/demo.sh time_scale:=2.0 gps:=false
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
# shellcheck disable=SC1091
. "$ROOT/env.sh"
exec aerosim launch sim_quad --sim-seconds "${AEROSIM_DEMO_SECONDS:-10}" "$@"
