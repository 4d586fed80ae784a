"""The markers conftest sets by name (slow, install) name tests that exist, and --fast uses them.

A test renamed or removed would otherwise leave its entry behind, and the test it was meant
for would silently be back in `bash scripts/test.sh --fast`.
"""

import ast
from pathlib import Path

from conftest import FAST_SELECTION, INSTALL_MODULES, REPO_DIR, SLOW_TESTS

TEST_DIR = Path(__file__).resolve().parent


def defined_tests() -> dict:
    """Every test function of the test modules -> the modules that define it."""
    where: dict = {}
    for f in TEST_DIR.glob('test_*.py'):
        for node in ast.parse(f.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    node.name.startswith('test_'):
                where.setdefault(node.name, []).append(f.name)
    return where


def test_every_slow_entry_is_one_test_function():
    where = defined_tests()
    for name in SLOW_TESTS:
        function = name.split('[')[0]
        assert len(where.get(function, ())) == 1, (name, where.get(function))


def test_every_install_module_exists():
    for module in INSTALL_MODULES:
        assert (TEST_DIR / module).is_file(), module


def test_the_fast_loop_leaves_out_graph_slow_and_install_tests():
    script = (REPO_DIR / 'scripts' / 'test.sh').read_text()
    assert f"-m '{FAST_SELECTION}'" in script
    assert FAST_SELECTION == 'not graph and not slow and not install'
