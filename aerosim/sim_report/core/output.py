"""Where and how a run's results are written: one folder per run (pure, no rclpy).

Every run writes into its own folder, <output_dir>/<title>-<scenario>-<UTC start time>/
(``run_folder``): summary.json (the verdict and the figures; it names its plot) and plot.png.
<output_dir>/latest is a symbolic link to the folder of the run that wrote last, so a script
finds the last run's summary at <output_dir>/latest/summary.json. Runs never overwrite each
other: two runs of the same graph and scenario within one second get -2, -3, ... folders.
"""

from datetime import datetime, timezone
import json
import os
from pathlib import Path
from typing import Callable, Optional, Tuple

SUMMARY_FILE = 'summary.json'
PLOT_FILE = 'plot.png'
LATEST = 'latest'


def _safe(text: str) -> str:
    """Text usable in a file name: letters, digits, - and _ kept, the rest '_'."""
    return ''.join(c if c.isalnum() or c in '-_' else '_' for c in text) or 'run'


def run_folder(out_dir, title: str, scenario: str, started: Optional[datetime] = None) -> Path:
    """A new folder for one run: <out_dir>/<title>-<scenario>-<YYYYmmdd-HHMMSS> (UTC), made.

    started: the run's start (default now). -2, -3, ... when the name is taken.
    """
    t = (started or datetime.now(timezone.utc)).astimezone(timezone.utc)
    base = f'{_safe(title)}-{_safe(scenario)}-{t:%Y%m%d-%H%M%S}'
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for k in range(1, 1000):
        folder = out / (base if k == 1 else f'{base}-{k}')
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            continue
    raise OSError(f'{out}: no free run folder for {base}')


def link_latest(folder: Path) -> Path:
    """Point <folder's parent>/latest at folder (replaced atomically); the link's path."""
    link = folder.parent / LATEST
    tmp = folder.parent / f'.{LATEST}.{os.getpid()}'
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(folder.name)
    os.replace(tmp, link)
    return link


def write_summary(folder: Path, summary: dict,
                  plot: Optional[Callable[[str], object]] = None) -> Tuple[Path, Path]:
    """Write summary.json (naming its plot), then draw plot.png if plot is given; the paths.

    The JSON goes first: a run whose plot fails still leaves its summary; latest points at
    the folder once its summary is there.
    """
    js, png = folder / SUMMARY_FILE, folder / PLOT_FILE
    summary['plot'] = str(png)
    js.write_text(json.dumps(summary, indent=2))
    link_latest(folder)
    if plot is not None:
        plot(str(png))
    return js, png
