#!/usr/bin/env python3
"""Long fuzz run: 100,000 malformed inputs per bridge port, 5,000 mutants per config file.

The same checks as the test suite's smoke run (aerosim/test/test_fuzz.py), with more inputs:
every input rejected exactly once (the bridge's /diagnostics against what was sent, less
kernel drops), nothing published, the sim not stepped, warnings rate-limited, no traceback.
Prints one FUZZ line per port. Usage (after scripts/setup.sh):

    python scripts/fuzz_ports.py [--n 100000] [--file-n 5000]
"""

import argparse
import os
from pathlib import Path
import subprocess
import sys

ROOT = Path(__file__).resolve().parent.parent


def main():
    """Run test_fuzz.py with the long counts; exit with its status."""
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--n', type=int, default=100_000, help='inputs per port')
    ap.add_argument('--file-n', type=int, default=5_000, help='mutants per config file')
    a = ap.parse_args()
    env = dict(os.environ, AEROSIM_FUZZ_N=str(a.n), AEROSIM_FUZZ_FILE_N=str(a.file_n))
    cmd = [sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', '-q', '-s',
           '-k', 'fuzz_mavlink or fuzz_imc or fuzz_usv or raise_only', 'test/test_fuzz.py']
    r = subprocess.run(cmd, cwd=ROOT / 'aerosim', env=env, stdout=subprocess.PIPE, text=True)
    print('\n'.join(line for line in r.stdout.splitlines()
                    if line.startswith('FUZZ') or 'passed' in line or 'failed' in line
                    or line.startswith('E ')))
    sys.exit(r.returncode)


if __name__ == '__main__':
    main()
