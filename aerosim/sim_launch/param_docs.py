"""docs/parameters.md's tables, rendered from the nodes' configuration tables.

Every node reads its parameters from a frozen dataclass and a table of ``sim_core.config.Param``
in a pure core (see ``sim_ros.params.read_config``). ``NODES`` says which tables each node
reads; ``render`` writes one markdown table per node, and ``sync`` puts them into the document
between ``<!-- params:NODE -->`` and ``<!-- /params -->`` markers. ``test_param_docs.py`` keeps
the document equal to the tables; after changing a table run

    python -m sim_launch.param_docs docs/parameters.md     # rewrite its tables
"""

import importlib
import re
import sys
from typing import Dict, List, Tuple

from sim_core import config, stepper
from sim_core import realtime as rt

PORT = ('sim_core.port_config', 'PortConfig', 'PORT_PARAMETERS')
SUITE = ('sim_sensors.core.suite', 'SuiteConfig', 'PARAMETERS')
FRAMES = ('sim_sensors.core.params', 'FramesConfig', 'FRAME_PARAMETERS')
WORLD_VIEW = ('sim_core.members', 'WorldSource', 'sim_viz.core.params.VIZ_WORLD_PARAMETERS')


def time_source(rate_hz: float, scenario) -> Tuple[type, dict]:
    """The time-source parameters of a SimTimeNode with these defaults (sim_core.stepper)."""
    cls = stepper.time_config(rate_hz, scenario)
    return cls, stepper.table_for(cls)


def realtime(follows: str = '') -> Tuple[type, dict]:
    """realtime_priority as sim_ros.params.declare_realtime declares it."""
    return rt.RealtimeConfig, rt.realtime_table(follows)


# node -> what it reads, in order: (module, config class, table (or module.table)), or a
# (class, table) pair
NODES: Dict[str, tuple] = {
    'world_node': (time_source(250.0, 'harbour_ops'),
                   ('sim_world.core.params', 'WorldConfig', 'PARAMETERS'),
                   ('sim_world.core.links', 'LinkBase', 'LINK_PARAMETERS'),
                   ('sim_report.core.params', 'JudgeConfig', 'JUDGE_PARAMETERS')),
    'plane_node': (('sim_dynamics.core.node_params', 'PlaneNodeConfig', 'PLANE_PARAMETERS'),
                   ('sim_autopilot.core.params', 'AutopilotConfig', 'PARAMETERS')),
    'usv_node': (('sim_dynamics.core.node_params', 'UsvGainsConfig', 'USV_GAINS_PARAMETERS'),),
    'usv_swarm_node': (time_source(50.0, None),
                       ('sim_dynamics.core.swarm_params', 'SwarmNodeConfig', 'NODE_PARAMETERS'),
                       ('sim_dynamics.core.swarm_params', 'SwarmParams', 'PARAMETERS'),
                       ('sim_report.core.params', 'SwarmSummaryConfig',
                        'SWARM_SUMMARY_PARAMETERS')),
    'sensors_node': (('sim_core.members', 'MemberSource',
                      'sim_sensors.core.params.SENSORS_PARAMETERS'), SUITE, FRAMES),
    'camera_node': (('sim_sensors.core.params', 'CameraConfig', 'CAMERA_PARAMETERS'),),
    'mavlink_bridge': (PORT, ('mavlink_bridge.core.bridge', 'BridgeConfig', 'PARAMETERS'),
                       ('sim_sensors.core.landing_target', 'TargetConfig', 'PARAMETERS'),
                       SUITE, FRAMES, realtime("the FC's process")),
    'builtin_fc': (PORT, ('mavlink_bridge.fc.fc_core', 'FcConfig', 'PARAMETERS'), realtime()),
    'imc_bridge': (PORT, ('imc_bridge.core.bridge', 'ImcConfig', 'PARAMETERS')),
    'usv_bridge': (PORT, ('usv_bridge.core.pipeline', 'UiConfig', 'PARAMETERS')),
    'monitor': (('sim_report.core.params', 'MonitorConfig', 'MONITOR_PARAMETERS'),),
    'viz_node': (('sim_viz.core.params', 'ModeConfig', 'MODE_PARAMETERS'),
                 ('sim_viz.core.params', 'VizConfig', 'VIZ_PARAMETERS'),
                 WORLD_VIEW,
                 ('sim_viz.core.params', 'SwarmFilesConfig', 'VIZ_SWARM_PARAMETERS')),
    'foxglove_node': (('sim_viz.core.params', 'FoxgloveConfig', 'FOXGLOVE_PARAMETERS'),),
    'recorder': (('sim_bag.core.params', 'RecorderConfig', 'RECORDER_PARAMETERS'),),
    'player': (('sim_bag.core.params', 'PlayerConfig', 'PLAYER_PARAMETERS'),),
}

BEGIN = '<!-- params:{node} -->'
END = '<!-- /params -->'


def tables(node: str) -> List[Tuple[type, dict]]:
    """The (config class, table) pairs node reads."""
    out = []
    for source in NODES[node]:
        if len(source) == 2:
            out.append(source)
            continue
        module, cls, table = source
        tm, _, table = table.rpartition('.')   # a table in another module: its full name
        out.append((getattr(importlib.import_module(module), cls),
                    getattr(importlib.import_module(tm or module), table)))
    return out


def render(node: str) -> str:
    """Node's parameters as one markdown table (a config's rows after the previous one's)."""
    parts = [config.markdown(cls, table).splitlines() for cls, table in tables(node)]
    rows = parts[0] + [r for p in parts[1:] for r in p[2:]]
    count = len(rows) - 2
    return '\n'.join([f'<details><summary><code>{node}</code>: {count} parameters</summary>',
                      '', *rows, '', '</details>'])


def sync(text: str) -> Tuple[str, List[str]]:
    """Text with every marked node's table rendered anew, and the nodes whose table changed.

    A marker naming a node not in NODES raises KeyError: the document names a node that reads
    no table.
    """
    changed = []

    def one(m):
        node = m.group(1)
        body = '\n' + render(node) + '\n'
        if m.group(2) != body:
            changed.append(node)
        return BEGIN.format(node=node) + body + END
    pattern = re.escape(BEGIN).replace(re.escape('{node}'), r'([\w]+)') + r'(.*?)' + \
        re.escape(END)
    return re.sub(pattern, one, text, flags=re.S), changed


def main(argv=None) -> int:
    """Rewrite the tables of the file named (docs/parameters.md); print which changed."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print('usage: python -m sim_launch.param_docs docs/parameters.md', file=sys.stderr)
        return 2
    with open(argv[0], encoding='utf-8') as f:
        text = f.read()
    new, changed = sync(text)
    if changed:
        with open(argv[0], 'w', encoding='utf-8') as f:
            f.write(new)
    print(f'{argv[0]}: {", ".join(changed) or "every table already current"}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
