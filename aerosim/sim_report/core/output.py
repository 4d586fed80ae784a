"""Where and how a run report is written: one place for every vehicle kind (pure, no rclpy)."""

import json
from pathlib import Path
from typing import Callable, Optional, Tuple


def report_paths(out_dir, title: str) -> Tuple[Path, Path]:
    """(<out_dir>/<title>_summary.json, <out_dir>/<title>.png); the folder is created."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return out / f'{title}_summary.json', out / f'{title}.png'


def write_summary(out_dir, title: str, summary: dict,
                  plot: Optional[Callable[[str], object]] = None) -> Tuple[Path, Path]:
    """Write the summary as JSON (naming its plot), then draw the plot if given; the paths.

    The JSON goes first: a run whose plot fails still leaves its summary.
    """
    js, png = report_paths(out_dir, title)
    summary['plot'] = str(png)
    js.write_text(json.dumps(summary, indent=2))
    if plot is not None:
        plot(str(png))
    return js, png
