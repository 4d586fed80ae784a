"""`aerosim` command line: start graphs without launch_ros (the pip-only path).

aerosim graphs [<graph>]                         list the graphs, or one's launch arguments
aerosim launch <graph> [arg:=value ...]          start a graph; Ctrl-C stops it
aerosim launch <graph> --sim-seconds N [...]     watch N sim seconds, report, stop
aerosim record [-o DIR] [--topics T ...] [...]   record topics to a rosbag2 directory
aerosim play BAG [--rate R] [--loop] [...]       replay a rosbag2 directory
aerosim schema [scenario|<kind>]                 a config file's JSON Schema (for editors)
"""

import argparse
import json
import shutil
import sys

from sim_core.errors import ConfigError
from sim_core.scenario_file import ScenarioFile
from sim_core.schema import json_schema
from sim_launch.graphs import GRAPHS, get_graph, resolve
from sim_launch.runner import Runner, node_command, ros_value


def parse_overrides(items):
    """['a:=1', 'b:=x'] -> {'a': '1', 'b': 'x'}; rejects items without ':='."""
    out = {}
    for it in items:
        if ':=' not in it:
            raise ValueError(f'launch arguments are name:=value, got {it!r}')
        k, v = it.split(':=', 1)
        out[k] = v
    return out


def graph_list() -> str:
    """Every graph, one line each: its name and description (the first sentence)."""
    width = max(len(n) for n in GRAPHS)
    return '\n'.join(f'  {g.name:<{width}}  {g.summary or g.description}'
                     for g in GRAPHS.values())


def _shown(value: str) -> str:
    """A launch argument value as typed on a command line ('' shown as '')."""
    return value if value else "''"


def graph_text(g) -> str:
    """One graph: its description, the nodes it can start, every launch argument."""
    lines = [f'{g.name}: {g.description}', '  nodes: ' + ', '.join(
        dict.fromkeys(n.name for n in g.nodes))]
    if g.fixed:
        lines.append('  set by this preset: ' + ', '.join(f'{k}:={_shown(v)}'
                                                          for k, v in g.fixed))
    for a in g.args:
        ch = ' {' + '|'.join(_shown(c) for c in a.choices) + '}' if a.choices else ''
        lines.append(f'  {a.name}:={_shown(a.default)}{ch}  {a.description}')
    return '\n'.join(lines)


def cmd_graphs(args) -> int:
    """List the graphs, or print one with its nodes and arguments."""
    if not args.graph:
        print('graphs (aerosim graphs <graph> for its launch arguments):')
        print(graph_list())
        return 0
    try:
        print(graph_text(get_graph(args.graph)))
    except KeyError as exc:
        print(f'aerosim: {exc.args[0]}', file=sys.stderr)
        return 2
    return 0


def cmd_launch(args) -> int:
    """Start a graph and wait for it to end."""
    try:
        graph = get_graph(args.graph)
        overrides = parse_overrides(args.overrides)
        nodes = resolve(graph, overrides)
    except (KeyError, ValueError, ConfigError) as exc:
        print(f'aerosim: {exc.args[0] if exc.args else exc}', file=sys.stderr)
        return 2
    runner = Runner()
    ns0 = nodes[0].namespace.strip('/') if nodes else ''
    runner.log(f'graph {graph.name}: ' + ', '.join(label(n) for n in nodes))
    for n in nodes:
        if n.module is None and shutil.which(n.executable) is None:
            runner.log(f'{n.name}: {n.executable} is not installed here; not started '
                       '(foxglove:=true serves the same view to Foxglove)')
            continue
        runner.start(label(n) if n.namespace.strip('/') not in ('', ns0) else n.name,
                     node_command(n), supervisor=n.supervisor, grace_s=n.stop_grace_s or None,
                     essential=n.essential)
    if args.sim_seconds is not None:
        ns = (nodes[0].namespace if nodes else '') or '/'
        cmd = [sys.executable, '-m', 'sim_report.monitor', '--ros-args', '-r', '__node:=monitor',
               '-r', f'__ns:={ns}',
               '-p', f'stop_after_sim_s:={ros_value(float(args.sim_seconds))}',
               '-p', 'use_sim_time:=true']
        runner.start('monitor', cmd, supervisor=True)
    return runner.wait()


def label(n) -> str:
    """/namespace/name of a resolved node."""
    return f'{n.namespace.rstrip("/")}/{n.name}'


def ros_args(pairs, extra=()) -> list:
    """['--ros-args', '-p', 'k:=v', ...] for the given (name, value) pairs (None: left out)."""
    out = ['--ros-args']
    for k, v in pairs:
        if v is not None:
            out += ['-p', f'{k}:={ros_value(v)}']
    return out + list(extra)


def cmd_record(args) -> int:
    """Record topics into a bag until Ctrl-C (sim_bag.recorder)."""
    from sim_bag import recorder  # deferred: rclpy loads only for record
    topics = list(args.topics) if args.topics else None
    recorder.main(['aerosim-record'] + ros_args([
        ('output', args.output), ('storage', args.storage), ('topics', topics),
        ('regex', args.regex), ('exclude', args.exclude),
        ('use_sim_time', True if args.use_sim_time else None)]))
    return 0


def cmd_play(args) -> int:
    """Play a bag (sim_bag.player)."""
    from sim_bag import player  # deferred: rclpy loads only for play
    topics = list(args.topics) if args.topics else None
    remaps = [x for r in args.remap for x in ('-r', r)]
    player.main(['aerosim-play'] + ros_args([
        ('bag', args.bag), ('rate', float(args.rate)), ('loop', args.loop or None),
        ('topics', topics), ('regex', args.regex), ('exclude', args.exclude),
        ('clock', args.clock or None), ('start_paused', args.start_paused or None)], remaps))
    return 0


def schema_models() -> dict:
    """{name: (model, its files)}: the scenario's and each kind's vehicle file's (registry)."""
    # deferred: the registry imports every kind's parts (JSBSim, numba); only `schema` needs it
    from kinds.entry import entries
    models = {'scenario': (ScenarioFile, 'config/scenarios/*.yaml')}
    models.update({k: (e.schema, f'kinds/{k}/params/*.yaml') for k, e in entries().items()})
    return models


def cmd_schema(args) -> int:
    """Print the JSON Schema of a config file; without a name list the names."""
    models = schema_models()
    if args.name is None:
        for name, (model, files) in models.items():
            print(f'{name}: {files} ({model.__name__})')
        return 0
    if args.name not in models:
        print(f'aerosim: no schema {args.name!r}; one of {", ".join(models)}', file=sys.stderr)
        return 2
    print(json.dumps(json_schema(models[args.name][0]), indent=2))
    return 0


def main(argv=None) -> int:
    """Entry point of the `aerosim` console script."""
    ap = argparse.ArgumentParser(prog='aerosim', description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='command', required=True)
    gp = sub.add_parser('graphs', help='list the graphs, or one with its launch arguments')
    gp.add_argument('graph', nargs='?', default='', help='a graph name, e.g. sim_quad_hil')
    gp.set_defaults(fn=cmd_graphs)
    lp = sub.add_parser('launch',
                        help='start a graph (like ros2 launch aerosim <graph>.launch.py)',
                        formatter_class=argparse.RawDescriptionHelpFormatter,
                        epilog='graphs (aerosim graphs <graph> lists its arguments):\n'
                        + graph_list())
    lp.add_argument('graph', help='graph name, e.g. sim_quad')
    lp.add_argument('overrides', nargs='*', help='launch arguments, name:=value')
    lp.add_argument('--sim-seconds', type=float, default=None,
                    help='watch this many sim seconds once the topics are discovered, print what '
                    'was published, stop')
    lp.set_defaults(fn=cmd_launch)
    rp = sub.add_parser('record', help='record topics to a rosbag2 directory (MCAP/sqlite3)')
    rp.add_argument('-o', '--output', default=None, help='bag directory (default rosbag2_<date>)')
    rp.add_argument('-s', '--storage', choices=('mcap', 'sqlite3'), default=None)
    rp.add_argument('--topics', nargs='+', default=None, help='topic names (default: all)')
    rp.add_argument('-e', '--regex', default=None, help='also topics matching this regex')
    rp.add_argument('-x', '--exclude', default=None, help='not topics matching this regex')
    rp.add_argument('--use-sim-time', action='store_true', help='stamp with /clock time')
    rp.set_defaults(fn=cmd_record)
    pp = sub.add_parser('play', help='replay a rosbag2 directory')
    pp.add_argument('bag', help='bag directory')
    pp.add_argument('-r', '--rate', type=float, default=1.0, help='playback rate (1 = real)')
    pp.add_argument('-l', '--loop', action='store_true', help='start over at the end')
    pp.add_argument('--topics', nargs='+', default=None, help='topics to play (default: all)')
    pp.add_argument('-e', '--regex', default=None, help='also topics matching this regex')
    pp.add_argument('-x', '--exclude', default=None, help='not topics matching this regex')
    pp.add_argument('--clock', action='store_true', help='publish /clock from the bag time')
    pp.add_argument('--start-paused', action='store_true', help='wait for ~/resume')
    pp.add_argument('--remap', action='append', default=[], metavar='OLD:=NEW',
                    help='rename a topic (ROS remapping rule)')
    pp.set_defaults(fn=cmd_play)
    sp = sub.add_parser('schema', help="print a config file's JSON Schema (scenario, or a "
                        "kind's vehicle file: multirotor, plane, boat, auv); no name: list them")
    sp.add_argument('name', nargs='?', default=None, help='scenario or a vehicle kind')
    sp.set_defaults(fn=cmd_schema)
    args, rest = ap.parse_known_args(argv)
    if rest:
        if args.command != 'launch' or any(':=' not in r for r in rest):
            ap.error(f'unrecognized arguments: {" ".join(rest)}')
        args.overrides = list(args.overrides) + rest
    return args.fn(args)


if __name__ == '__main__':
    sys.exit(main())
