"""The README and the docs are true where a machine can tell: their commands and links exist.

Every command line the README and docs/ show in a code block is checked against what it names:
`aerosim launch <graph> name:=value ...` (the graph, each argument and its value, resolved as
the runner would; `aerosim graphs`, `schema`, `record`, `play` as the CLI parses them),
`ros2 launch aerosim <file>.launch.py name:=value` (the launch file and the same arguments),
`bash scripts/<x>.sh` and `python scripts|bench/<x>.py` (the file). Every relative link goes to a
file that exists. The README stays short: under 500 lines, its details in docs/.
"""

from pathlib import Path
import re
import shlex

import pytest

from conftest import REPO_DIR

README = REPO_DIR / 'README.md'
PAGES = [README] + sorted((REPO_DIR / 'docs').glob('*.md'))
# commands a page shows that name a file or graph of another project (PX4, DUNE, rosdep)
FOREIGN = ('./bin/px4', 'dune', 'rosdep', 'colcon', 'git clone', 'mkdir', 'cd ', 'echo ',
           'source ', 'sudo ', 'for i in', 'python3 -m pip')


def code_lines(path: Path):
    """(line number, command) of every shell line in the page's indented code blocks."""
    out = []
    prev_blank = True
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith('    ') and prev_blank or line.startswith('    ') and out and \
                out[-1][0] == n - 1:
            text = line.strip()
            if text and not text.startswith('#'):
                out.append((n, text.split('  #')[0].strip()))
            continue
        prev_blank = not line.strip()
    return out


def commands(prefix: str):
    """(page, line, argv) of every shown command starting with prefix."""
    found = []
    for page in PAGES:
        for n, text in code_lines(page):
            for part in re.split(r'\s*(?:&&|;)\s*', text):
                if part.startswith(prefix) and not part.endswith('\\'):
                    try:
                        found.append((page.name, n, shlex.split(part)))
                    except ValueError:
                        continue
    return found


def test_the_readme_is_short_and_links_its_details():
    lines = README.read_text().splitlines()
    assert len(lines) < 500, len(lines)
    assert lines[0] == '# aerosim'


@pytest.mark.parametrize('page', PAGES, ids=lambda p: p.name)
def test_every_relative_link_goes_to_a_file(page):
    text = page.read_text()
    bad = []
    for target in re.findall(r'\]\(([^)#\s]+)', text):
        if '://' in target or target.startswith('mailto:'):
            continue
        if not (page.parent / target).exists():
            bad.append(target)
    assert not bad, f'{page.name}: links to nothing: {bad}'


def test_every_aerosim_command_shown_is_one_the_cli_takes():
    from sim_core.errors import ConfigError
    from sim_launch import cli
    from sim_launch.graphs import get_graph, resolve
    shown = commands('aerosim ')
    assert len(shown) > 20
    for page, n, argv in shown:
        where = f'{page}:{n}: {" ".join(argv)}'
        sub = argv[1]
        if sub == 'launch':
            graph = argv[2]
            args = {}
            for a in argv[3:]:
                if a.startswith('--'):
                    assert a in ('--sim-seconds',) or a.startswith('--sim-seconds='), where
                    continue
                if ':=' not in a:
                    continue            # the value of --sim-seconds
                k, v = a.split(':=', 1)
                args[k] = v
            if page != README.name:     # a page of docs/ may show a user's own file
                for k in [k for k, v in args.items() if v.endswith('.yaml')]:
                    args.pop(k)
            try:
                resolve(get_graph(graph), args)
            except (KeyError, ValueError, ConfigError) as exc:
                raise AssertionError(f'{where}: {exc}') from exc
        elif sub in ('graphs', 'schema', 'record', 'play'):
            parser_args = [x for x in argv[1:] if x != '>' and not x.endswith('.json')]
            if sub == 'graphs' and len(parser_args) > 1:
                get_graph(parser_args[1])
            elif sub == 'schema' and len(parser_args) > 1:
                assert cli.main(['schema', parser_args[1]]) == 0, where
        else:
            raise AssertionError(f'{where}: no aerosim subcommand {sub!r}')


def test_every_ros2_launch_shown_names_a_launch_file_and_its_arguments():
    from sim_launch.graphs import get_graph, resolve
    shown = commands('ros2 launch aerosim ')
    assert shown
    for page, n, argv in shown:
        where = f'{page}:{n}: {" ".join(argv)}'
        f = argv[3]
        assert (REPO_DIR / 'aerosim' / 'launch' / f).is_file(), where
        args = dict(a.split(':=', 1) for a in argv[4:] if ':=' in a)
        try:
            resolve(get_graph(f[:-len('.launch.py')]), args)
        except (KeyError, ValueError) as exc:
            raise AssertionError(f'{where}: {exc}') from exc


def test_every_script_shown_exists():
    shown = commands('bash ') + commands('python ')
    assert shown
    for page, n, argv in shown:
        path = next((a for a in argv[1:] if a.endswith(('.sh', '.py'))), None)
        if path is None or argv[1] == '-m':
            continue
        assert (REPO_DIR / path).is_file() or (REPO_DIR / 'aerosim' / path).is_file(), \
            f'{page}:{n}: {" ".join(argv)}: no {path}'
