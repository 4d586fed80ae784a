"""ROS 2 parameter files as rcl reads them (pure, no rclpy): which sections apply to a node.

rcl matches a section's key against the node's fully qualified name (``/usv/imc_bridge``), not
its bare name: a file keyed ``imc_bridge:`` applies to ``/imc_bridge`` only, and silently not
to the same node under a graph's namespace. Keys may use wildcards (``/**`` any number of
namespace levels, none included; ``*`` one name) and nest namespaces
(``/usv: {imc_bridge: {ros__parameters: ...}}``); a key without a leading ``/`` is absolute.
That is rclpy's behaviour here (checked with the rclpy of this install: ``imc_bridge``,
``/**/imc_bridge``, ``/*/imc_bridge``, ``usv/imc_bridge`` against ``/usv/imc_bridge`` and
``/imc_bridge``). The node can then say when a file it was given has no section for it, or
names a parameter it does not have, instead of ignoring it silently.
"""

import re
from typing import Dict, Iterable, List, Sequence, Tuple

PARAMS_KEY = 'ros__parameters'


def sections(doc) -> Dict[str, dict]:
    """{node key ('/usv/imc_bridge', '/**/imc_bridge'): its ros__parameters} of a loaded file."""
    out = {}

    def walk(prefix, d):
        if not isinstance(d, dict):
            return
        for k, v in d.items():
            if k == PARAMS_KEY:
                out[prefix or '/'] = v if isinstance(v, dict) else {}
            else:
                walk(f'{prefix}/{str(k).strip("/")}', v)
    walk('', doc)
    return out


def key_matches(key: str, fqn: str) -> bool:
    """Whether a section key (wildcards allowed) applies to the node fully qualified fqn."""
    rx = ''
    for part in key.strip('/').split('/'):
        if part == '**':
            rx += '(/[^/]+)*'
        else:
            rx += '/' + re.escape(part).replace(r'\*', '[^/]*')
    return re.fullmatch(rx, fqn) is not None


def flatten(params: dict, prefix: str = '') -> Dict[str, object]:
    """{'a.b': value} of nested parameter dicts (ROS parameter namespaces)."""
    out = {}
    for k, v in params.items():
        name = f'{prefix}{k}'
        if isinstance(v, dict):
            out.update(flatten(v, name + '.'))
        else:
            out[name] = v
    return out


def files_in_args(argv: Sequence[str]) -> List[str]:
    """The --params-file paths of a ROS command line (inside --ros-args ... [--])."""
    files, in_ros = [], False
    it = iter(argv)
    for a in it:
        if a == '--ros-args':
            in_ros = True
        elif a == '--':
            in_ros = False
        elif in_ros and a == '--params-file':
            files.append(next(it, ''))
    return [f for f in files if f]


def check_nodes(files: Iterable[Tuple[str, dict]],
                nodes: Iterable[Tuple[str, Iterable[str]]]) -> List[str]:
    """Problems of the parameter files (path, loaded doc) given to a process's nodes.

    nodes: (fully qualified name, declared parameter names) of each node of the process (one,
    or several composed). A file with no section for any of them (its keys listed, with the
    key that would apply), and parameters of a section keyed with a node's name that this
    node does not declare (a typo, or a file for another node), each as one line.
    """
    nodes = [(fqn, set(declared)) for fqn, declared in nodes]
    problems = []
    for path, doc in files:
        secs = sections(doc)
        applied = False
        for fqn, declared in nodes:
            mine = {k: v for k, v in secs.items() if key_matches(k, fqn)}
            applied = applied or bool(mine)
            # a section for every node ('/**:') may hold parameters meant for another one
            named = [v for k, v in mine.items() if '*' not in k.rsplit('/', 1)[-1]]
            unknown = sorted({n for v in named for n in flatten(v)} - set(declared))
            if unknown:
                problems.append(f'parameter file {path}: {fqn} has no parameter '
                                f'{", ".join(unknown)} (ignored)')
        if '/' in secs or '/**' in secs:
            problems.append(
                f"parameter file {path}: key '/**:' shares rcl's slot with the command line's "
                "-p overrides (and launch_ros's parameter dicts): a node section of a later "
                "file then beats the launch arguments; key it '/**/*:' (every node) instead")
        if not applied:
            fqns = [fqn for fqn, _ in nodes]
            name = fqns[0].rsplit('/', 1)[-1]
            problems.append(
                f'parameter file {path}: no section applies to {", ".join(fqns)} (sections: '
                f'{", ".join(secs) or "none"}); rcl matches the fully qualified name, so key '
                f"it '/**/{name}:' (any namespace) or '{fqns[0]}:'; its values are not used")
    return problems
