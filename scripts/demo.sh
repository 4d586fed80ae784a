#!/usr/bin/env bash
# Set everything up (idempotent) and run the main job: the quad HIL demo. The sim_quad_hil preset
# of the world (the quad, its sensors, the MAVLink HIL bridge, the built-in flight controller
# over real UDP, lockstep, as fast as possible) flies the default scenario's mission to the end;
# the world's judge follows it on ground truth, prints a summary and writes it with a plot into
# aerosim_runs/sim_quad_hil-<scenario>-<UTC time>/ (aerosim_runs/latest links the last run).
# Extra arguments are launch arguments, e.g.  bash scripts/demo.sh scenario:=short_hop gps:=true
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
# shellcheck disable=SC1091
. "$ROOT/env.sh"
exec aerosim launch sim_quad_hil report:=true time_scale:=0 \
  output_dir:="${AEROSIM_OUTPUT_DIR:-$ROOT/aerosim_runs}" "$@"
