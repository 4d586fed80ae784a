"""The presets: each graph a user knows by name is sim_world with other argument defaults.

A preset is the world graph (sim_launch.graphs.world.SIM_WORLD: the same nodes, the same
processes) with its own defaults (scenario, vehicle names, controller, rate, title), the
world's arguments it does not offer fixed at a value, and an argument shown under the name
its users know (sim_quad_hil's `fc` is the world's `controller`). resolve() takes a preset's
values back to the world's names, so both launch paths start the world with them.

    sim_quad        a quad and its sensor topics (and camera); no controller in the graph: any
                    ROS node publishing /quad/effector_command flies it (controller topic)
    sim_quad_hil    a quad (or a fleet, vehicles:=N) flown over MAVLink HIL by the built-in FC,
                    PX4 SITL or another FC (fc)
    sim_plane       the JSBSim Cessna flown by AeroSim's autopilot in the world's step
    sim_plane_hil   the same aircraft over MAVLink HIL (built-in FC or PX4)
    sim_imc         a USV as an IMC system for DUNE and Neptus (controller imc)
    sim_auv         a LAUV AUV: its built-in pilot, or DUNE's LAUV over IMC
"""

from typing import Dict, Sequence, Tuple

from sim_launch.graphs.language import Graph, LaunchArg
from sim_launch.graphs.world import SIM_WORLD

# the world's MAVLink arguments: a graph without a MAVLink vehicle does not offer them
MAVLINK_ARGS = ('px4_instance', 'transport', 'bind', 'fc_address', 'tcp_bind', 'mission_link',
                'mission_bind', 'px4_params', 'fleet_start_timeout_s', 'mavlink_params',
                'fc_params')
IMC_ARGS = ('imc_bind', 'imc_peers', 'imc_params')
SUITE_ARGS = ('seed', 'gps', 'mag', 'baro', 'sensor_topics', 'sensors_params')


def preset(name: str, summary: str, description: str, defaults: Dict[str, str],
           hide: Sequence[str] = (), renamed: Tuple[Tuple[str, str], ...] = (),
           choices: Dict[str, Tuple[str, ...]] = None) -> Graph:
    """SIM_WORLD as the graph `name` (summary: its one line in lists).

    defaults: the world's arguments' new defaults (world names); hide: the world's arguments
    it does not offer (they keep their default here); renamed: (world name, name shown);
    choices: an argument's choices narrowed (world name -> choices).
    """
    unknown = (set(defaults) | set(hide) | {w for w, _ in renamed} | set(choices or {})) - {
        a.name for a in SIM_WORLD.args}
    if unknown:
        raise KeyError(f'preset {name}: the world has no argument {sorted(unknown)[0]!r}')
    shown = dict(renamed)
    args, fixed = [], []
    for a in SIM_WORLD.args:
        value = defaults.get(a.name, a.default)
        if a.name in hide:
            fixed.append((a.name, value))
            continue
        ch = (choices or {}).get(a.name, a.choices)
        if ch and value not in ch:
            raise ValueError(f'preset {name}: {a.name} default {value!r} not in {ch}')
        args.append(LaunchArg(shown.get(a.name, a.name), value, a.description, ch))
    return Graph(name, description, tuple(args), SIM_WORLD.nodes, world=True,
                 renamed=tuple(renamed), fixed=tuple(fixed), summary=summary)


SIM_QUAD = preset(
    'sim_quad', 'a quad and its sensors; any ROS node flies it (effector_command)',
    'A quad (6-DOF multirotor) and its sensor topics (IMU, magnetometer, '
    'barometer, GNSS, camera) in the world; no controller: any ROS node publishing '
    "/quad/effector_command (motor throttles) flies it (the world's controller topic)",
    {'scenario': 'default', 'namespace': 'quad', 'controller': 'topic',
     'lockstep': 'false', 'camera': 'true', 'title': 'sim_quad',
     'rviz_config': 'aerosim.rviz'},
    hide=('controller',) + MAVLINK_ARGS + IMC_ARGS)

SIM_QUAD_HIL = preset(
    'sim_quad_hil', 'a quad or a fleet flown over MAVLink HIL: built-in FC, PX4, another FC',
    'A quad (or a fleet: vehicles:=N) flown over MAVLink HIL by a flight '
    'controller: the built-in FC, PX4 SITL (you start it) or another; sensors on MAVLink and '
    'ROS topics; lockstep',
    {'scenario': 'default', 'namespace': 'quad', 'controller': 'builtin',
     'title': 'sim_quad_hil', 'rviz_config': 'aerosim.rviz'},
    hide=IMC_ARGS, renamed=(('controller', 'fc'),),
    choices={'controller': ('builtin', 'px4', 'external')})

SIM_PLANE = preset(
    'sim_plane', "the JSBSim Cessna 172R flown by AeroSim's autopilot",
    "A JSBSim Cessna 172R flown by AeroSim's autopilot (flight plan, holds) in "
    "the world's step: PFD, trajectory and effector topics, sensors",
    {'scenario': 'circuit', 'namespace': 'plane', 'controller': 'autopilot',
     'rate_hz': '125.0', 'title': 'sim_plane', 'rviz_config': 'aerosim_plane.rviz'},
    hide=('controller',) + MAVLINK_ARGS + IMC_ARGS)

SIM_PLANE_HIL = preset(
    'sim_plane_hil', 'the Cessna over MAVLink HIL: built-in FC or PX4',
    'The JSBSim Cessna 172R over MAVLink HIL (fixed-wing mixer, PX4 SITL '
    'plane outputs, pitot in HIL_SENSOR), flown by the built-in FC or PX4 SITL',
    {'scenario': 'circuit', 'namespace': 'plane', 'controller': 'builtin',
     'rate_hz': '125.0', 'title': 'sim_plane_hil', 'rviz_config': 'aerosim_plane.rviz'},
    hide=IMC_ARGS, renamed=(('controller', 'fc'),), choices={'controller': ('builtin', 'px4')})

SIM_IMC = preset(
    'sim_imc', 'a USV as an IMC system for DUNE and Neptus',
    'A surface vessel (USV model) as an IMC system on UDP for LSTS DUNE and Neptus: '
    'SimulatedState, EstimatedState, Announce, Heartbeat out; leak, acoustic, '
    'dynamics-parameter simulation and actuation in',
    {'scenario': 'harbour', 'namespace': 'usv', 'controller': 'imc', 'rate_hz': '50.0',
     'lockstep': 'false', 'title': 'sim_imc', 'rviz_config': 'aerosim_usv.rviz'},
    hide=('controller',) + MAVLINK_ARGS + SUITE_ARGS)

SIM_AUV = preset(
    'sim_auv', 'a LAUV AUV: its built-in pilot, or DUNE over IMC',
    "An AUV (a LAUV, 6-DOF, VSIM's coefficients) in a world of water: its "
    'built-in controller dives, runs its legs at depth and surfaces (the scenario dive), or '
    "DUNE's LAUV drives it over IMC (controller: imc; DUNE's sensor simulators fed by our "
    'SimulatedState); judged with its depths',
    {'scenario': 'dive', 'imc_params': 'imc_bridge_auv.yaml', 'title': 'sim_auv',
     'rviz_config': 'aerosim_auv.rviz'},
    hide=MAVLINK_ARGS + SUITE_ARGS, choices={'controller': ('', 'builtin', 'imc')})

PRESETS = (SIM_QUAD, SIM_QUAD_HIL, SIM_PLANE, SIM_PLANE_HIL, SIM_IMC, SIM_AUV)
