"""`aerosim` command line: start graphs without launch_ros (the pip-only path).

aerosim graphs                                   list graphs and their launch arguments
aerosim launch <graph> [arg:=value ...]          start a graph; Ctrl-C stops it
aerosim launch <graph> --sim-seconds N [...]     run N sim seconds, report, stop
"""

import argparse
import sys

from sim_core.errors import ConfigError
from sim_core.graphs import GRAPHS, get_graph, resolve
from sim_core.runner import Runner, node_command, ros_value


def parse_overrides(items):
    """['a:=1', 'b:=x'] -> {'a': '1', 'b': 'x'}; rejects items without ':='."""
    out = {}
    for it in items:
        if ':=' not in it:
            raise ValueError(f'launch arguments are name:=value, got {it!r}')
        k, v = it.split(':=', 1)
        out[k] = v
    return out


def cmd_graphs(_args) -> int:
    """Print every graph with its nodes and arguments."""
    for g in GRAPHS.values():
        print(f'{g.name}: {g.description}')
        print('  nodes: ' + ', '.join(n.name for n in g.nodes))
        for a in g.args:
            ch = f' {{{"|".join(a.choices)}}}' if a.choices else ''
            print(f'  {a.name}:={a.default}{ch}  {a.description}')
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
    runner.log(f'graph {graph.name}: ' + ', '.join(f'{n.namespace.rstrip("/")}/{n.name}'
                                                    for n in nodes))
    for n in nodes:
        runner.start(n.name, node_command(n), supervisor=n.supervisor)
    if args.sim_seconds is not None:
        ns = nodes[0].namespace if nodes else '/'
        cmd = [sys.executable, '-m', 'sim_core.ros.monitor', '--ros-args', '-r', '__node:=monitor',
               '-r', f'__ns:={ns}',
               '-p', f'stop_after_sim_s:={ros_value(float(args.sim_seconds))}',
               '-p', 'use_sim_time:=true']
        runner.start('monitor', cmd, supervisor=True)
    return runner.wait()


def main(argv=None) -> int:
    """Entry point of the `aerosim` console script."""
    ap = argparse.ArgumentParser(prog='aerosim', description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='command', required=True)
    sub.add_parser('graphs', help='list graphs and launch arguments').set_defaults(fn=cmd_graphs)
    lp = sub.add_parser('launch',
                        help='start a graph (like ros2 launch aerosim <graph>.launch.py)')
    lp.add_argument('graph', help='graph name, e.g. sim_quad')
    lp.add_argument('overrides', nargs='*', help='launch arguments, name:=value')
    lp.add_argument('--sim-seconds', type=float, default=None,
                    help='run this many sim seconds, print what was published, stop')
    lp.set_defaults(fn=cmd_launch)
    args, rest = ap.parse_known_args(argv)
    if rest:
        if args.command != 'launch' or any(':=' not in r for r in rest):
            ap.error(f'unrecognized arguments: {" ".join(rest)}')
        args.overrides = list(args.overrides) + rest
    return args.fn(args)


if __name__ == '__main__':
    sys.exit(main())
