"""The README's parameter tables, rendered from the nodes' configuration tables.

Every node reads its parameters from a frozen dataclass and a table of ``sim_core.config.Param``
in a pure core (see ``sim_ros.params.read_config``). ``NODES`` says which tables each node
reads; ``render`` writes one markdown table per node, and ``sync`` puts them into the README
between ``<!-- params:NODE -->`` and ``<!-- /params -->`` markers. ``test_param_docs.py`` keeps
the README equal to the tables; after changing a table run

    python -m sim_launch.param_docs README.md        # rewrite the README's tables
"""

import importlib
import re
import sys
from typing import Dict, List, Tuple

from sim_core import config

# node -> the (module, config class, table) it reads, in the order it declares them
NODES: Dict[str, Tuple[Tuple[str, str, str], ...]] = {
    'mavlink_bridge': (('mavlink_bridge.core.bridge', 'BridgeConfig', 'PARAMETERS'),
                       ('sim_sensors.core.suite', 'SuiteConfig', 'PARAMETERS'),
                       ('sim_sensors.core.landing_target', 'TargetConfig', 'PARAMETERS')),
    'sensors_node': (('sim_sensors.core.suite', 'SuiteConfig', 'PARAMETERS'),),
    'imc_bridge': (('imc_bridge.core.bridge', 'ImcConfig', 'PARAMETERS'),),
    'usv_bridge': (('usv_bridge.core.pipeline', 'UiConfig', 'PARAMETERS'),),
}

BEGIN = '<!-- params:{node} -->'
END = '<!-- /params -->'


def tables(node: str) -> List[Tuple[type, dict]]:
    """The (config class, table) pairs node reads."""
    out = []
    for module, cls, table in NODES[node]:
        m = importlib.import_module(module)
        out.append((getattr(m, cls), getattr(m, table)))
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

    A marker naming a node not in NODES raises KeyError: the README names a node that reads
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
    """Rewrite the tables of the file named (the README); print which changed."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print('usage: python -m sim_launch.param_docs README.md', file=sys.stderr)
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
