#!/usr/bin/env bash
# aerosim one-step setup (no ROS apt): project venv + pinned ROS 2 wheels + aerosim_msgs + aerosim.
# Idempotent and fast when nothing changed (every stage is skipped when its inputs' hash matches).
# Result: .venv/, install/ (colcon), and env.sh to source:  source env.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv"
STAMPS="$VENV/.aerosim-stamps"
PY="${AEROSIM_PYTHON:-python3.11}"
log() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }
hash_of() { cat "$@" 2>/dev/null | sha256sum | cut -c1-16; }
stamp_ok() { [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]; }
stamp_set() { mkdir -p "$STAMPS"; echo "$2" > "$STAMPS/$1"; }

# --- 0. system prerequisites (Debian/Ubuntu): Python 3.11 with headers and venv, cmake, g++ ---
command -v "$PY" >/dev/null 2>&1 || PY=python3
"$PY" -c 'import sys; assert sys.version_info[:2] == (3, 11)' 2>/dev/null \
  || die "Python 3.11 is required (the ROS 2 wheels are cp311); found: $("$PY" --version 2>&1)"
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
PYINC="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
[ -f "$PYINC/Python.h" ] || missing+=(python3-dev)
"$PY" -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing system packages: ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    die "missing system packages: ${missing[*]}  (run: sudo apt-get install ${missing[*]})"
  fi
fi

# --- 1. venv with pinned wheels ---
if [ ! -x "$VENV/bin/python" ]; then
  log "creating venv $VENV"
  "$PY" -m venv "$VENV"
fi
VPY="$VENV/bin/python"
# The ros-wheels bootstrapper re-executes Python once to set LD_LIBRARY_PATH; skip it during setup.
export _ROS_WHEELS_BOOTSTRAP_COMPLETE=1
req_hash="$(hash_of requirements.txt constraints.txt)"
if ! stamp_ok pip "$req_hash"; then
  log "installing pinned wheels (requirements.txt, constraints.txt)"
  # (this machine's pip config lists local index folders that may not exist: drop that noise)
  "$VPY" -m pip install -q --disable-pip-version-check -r requirements.txt -c constraints.txt \
    2>&1 | { grep -v '^WARNING: Location .* is ignored' || true; }
  stamp_set pip "$req_hash"
  rm -f "$STAMPS/fixups" "$STAMPS/msgs"
else
  log "wheels up to date"
fi

# --- 1b. the pytest a ROS 2 install runs `colcon test` with (Ubuntu 24.04's python3-pytest, the
# base of Jazzy and Kilted), beside ours: test_colcon runs the package's tests under it ---
DISTRO_PYTEST=7.4.4
if ! stamp_ok distro-pytest "$DISTRO_PYTEST"; then
  log "installing pytest $DISTRO_PYTEST (a ROS distro's) into .venv/distro-pytest"
  rm -rf "$VENV/distro-pytest"
  "$VPY" -m pip install -q --disable-pip-version-check --no-deps --target "$VENV/distro-pytest" \
    "pytest==$DISTRO_PYTEST" 2>&1 | { grep -v '^WARNING: Location .* is ignored' || true; }
  stamp_set distro-pytest "$DISTRO_PYTEST"
fi

# --- 2. CMake fix-up: the wheels' exported targets name the wheel builder's include dirs ---
NPINC="$("$VPY" -c 'import numpy; print(numpy.get_include())')"
VPYINC="$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
fix_hash="$(echo "$VPYINC $NPINC" | sha256sum | cut -c1-16)"
if ! stamp_ok fixups "$fix_hash"; then
  log "rewriting wheel-builder include paths in $VENV/share/**/*.cmake"
  { grep -rl --include='*.cmake' '/opt/python/cp311-cp311' "$VENV/share" 2>/dev/null || true; } |
  while read -r f; do
    sed -i \
      -e "s#/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include#${NPINC}#g" \
      -e "s#/opt/python/cp311-cp311/include/python3.11#${VPYINC}#g" "$f"
  done
  stamp_set fixups "$fix_hash"
fi

# --- 3. colcon build of aerosim_msgs (interfaces) ---
msgs_hash="$(hash_of aerosim_msgs/CMakeLists.txt aerosim_msgs/package.xml aerosim_msgs/msg/* aerosim_msgs/srv/*)"
if ! stamp_ok msgs "$msgs_hash" || [ ! -f install/setup.bash ]; then
  log "colcon build aerosim_msgs"
  mkdir -p log
  (
    export AMENT_PREFIX_PATH="$VENV" CMAKE_PREFIX_PATH="$VENV" PATH="$VENV/bin:$PATH"
    "$VENV/bin/colcon" --log-base log build --base-paths aerosim_msgs --build-base build \
      --install-base install --event-handlers console_cohesion- summary+ status- \
      --cmake-args -DBUILD_TESTING=OFF -DPython3_EXECUTABLE="$VPY" >log/colcon_build.txt 2>&1 \
      || { tail -40 log/colcon_build.txt >&2; exit 1; }
  ) || { mkdir -p log; die "colcon build of aerosim_msgs failed (full log: log/colcon_build.txt)"; }
  stamp_set msgs "$msgs_hash"
else
  log "aerosim_msgs up to date"
fi

# --- 4. aerosim (editable, so source edits need no re-install) ---
pkg_hash="$(hash_of aerosim/setup.py aerosim/setup.cfg aerosim/package.xml)"
if ! stamp_ok aerosim "$pkg_hash"; then
  log "installing aerosim (editable)"
  mkdir -p log
  "$VPY" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation \
    -e aerosim >log/pip_aerosim.txt 2>&1 || { cat log/pip_aerosim.txt >&2; die "installing aerosim failed"; }
  stamp_set aerosim "$pkg_hash"
else
  log "aerosim up to date"
fi

# --- 5. env file ---
LIBDIRS="$VENV/lib"
for d in "$VENV"/lib/python3.11/site-packages/ros_*.libs; do [ -d "$d" ] && LIBDIRS="$LIBDIRS:$d"; done
cat > env.sh <<ENV
# Generated by scripts/setup.sh: source this file (bash) to use aerosim without a ROS install.
export VIRTUAL_ENV="$VENV"
# .venv/bin: python, colcon, ruff...; .venv/lib/aerosim: the aerosim command and every node
# executable (the ament_python layout of setup.cfg, where \`ros2 run aerosim <node>\` finds them)
export PATH="$VENV/bin:$VENV/lib/aerosim:\${PATH}"
export AMENT_PREFIX_PATH="$VENV\${AMENT_PREFIX_PATH:+:\$AMENT_PREFIX_PATH}"
export LD_LIBRARY_PATH="$LIBDIRS\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export _ROS_WHEELS_BOOTSTRAP_COMPLETE=1
export RMW_IMPLEMENTATION="\${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
# the ROS 2 distribution of the pinned wheels (ros-rclpy 9.1 = Kilted), as a ROS setup.bash sets it
export ROS_DISTRO="\${ROS_DISTRO:-kilted}"
# DDS discovery stays on this host unless the user widens it (SUBNET) for multi-host runs.
export ROS_AUTOMATIC_DISCOVERY_RANGE="\${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
# colcon install space of aerosim_msgs (Python module, typesupport libraries, share/);
# colcon's scripts read unset variables, so relax 'set -u' while sourcing them.
case \$- in *u*) _aerosim_u=1; set +u ;; *) _aerosim_u= ;; esac
COLCON_TRACE= . "$ROOT/install/setup.bash"
[ -n "\$_aerosim_u" ] && set -u
unset _aerosim_u
ENV
log "done: source $ROOT/env.sh"
