"""The world report's figure: every vehicle's track over its plan, heights and results (pure).

Drawn with matplotlib's Agg backend (imported when a figure is drawn, not before: the judge
itself needs no matplotlib).
"""

from typing import Dict, List

import numpy as np

from sim_report.core.mission import pyplot

ZOOM_SPAN_M = 400.0         # the plot's second top view frames the tracks smaller than this [m]


def plot_world(judge, path: str, title: str) -> None:
    """Write a PNG of a world's run judged by judge (a sim_report.core.world.WorldJudge).

    Every track (top view, the kind's marker and colour) over its plan, a close-up of the
    small tracks, altitude over time, and the results.
    """
    plt = pyplot()
    fig, axes = plt.subplots(1, 4, figsize=(22, 6.5),
                             gridspec_kw={'width_ratios': [1.2, 1.2, 1.0, 0.9]})
    top, zoom, alt, txt = axes
    styles = ('-', '--', ':', '-.')
    counts: Dict[str, int] = {}
    small: List[np.ndarray] = []
    lines = []
    for e in judge.entries:
        j, m = e.judge, e.member
        k = counts.get(m.kind, 0)
        counts[m.kind] = k + 1
        c, ls = j.color[:3], styles[k % len(styles)]
        ts, P = j.path()
        if e.tail:
            ts = np.concatenate([ts, [x[0] for x in e.tail]])
            P = np.vstack([P, np.array([x[1] for x in e.tail])])
        plan = j.plan()
        for ax in (top, zoom):
            ax.plot(plan[:, 0], plan[:, 1], ls=':', color=c, lw=0.8, alpha=0.7)
            ax.plot(plan[1:, 0], plan[1:, 1], 'o', mfc='none', mec=c, ms=5)
            ax.plot(P[:, 0], P[:, 1], ls=ls, color=c, lw=1.5,
                    label=f'{m.name} ({m.kind})')
            ax.plot(plan[0, 0], plan[0, 1], j.marker, mfc='none', mec=c, ms=9)
            if len(P):
                ax.plot(P[-1, 0], P[-1, 1], j.marker, color=c, ms=9)
            td = e.judge.summary().get('deck_landing')
            if td and len(ts):
                q = P[min(int(np.searchsorted(ts, td['t_s'])), len(P) - 1)]
                ax.plot(q[0], q[1], '*', color='k', ms=12,
                        label=f"{m.name} touchdown on {td['deck']}: "
                              f"{td['pad_error_m']:.2f} m from the pad")
            for x in e.collisions:
                i = int(np.searchsorted(ts, x['t_s'])) if len(ts) else 0
                if len(P):
                    q = P[min(i, len(P) - 1)]
                    ax.plot(q[0], q[1], 'x', color='k', ms=11, mew=2)
        if e.pad_track:
            track = np.array(e.pad_track)
            for ax in (top, zoom):
                ax.plot(track[:, 0], track[:, 1], ls='--', color=(0.95, 0.55, 0.10), lw=1.0,
                        label=f'{m.name} deck pad')
        pts = np.vstack([P[:, :2], plan[:, :2]])
        if float(np.max(np.ptp(pts, axis=0))) < ZOOM_SPAN_M:
            small.append(pts)
        alt.plot(ts, P[:, 2] if len(P) else ts, ls=ls, color=c, label=m.name)
        for tr in j.reached_at_s:
            alt.axvline(tr, color=c, lw=0.5, alpha=0.5)
        r = judge.row(e)
        ca = r['closest_approach']
        lines.append(f'{m.name} ({m.kind}, {m.controller}): {r["result"]}, '
                     f'{r["items_reached"]}/{r["items"]} items'
                     + (f'\n  closest {ca["distance_m"]:.1f} m to {ca["with"]} at '
                        f'{ca["t_s"]:.1f} s' if ca else '')
                     + (f'\n  FC lost at {e.fc_lost_at:.1f} s'
                        if e.fc_lost_at is not None else '')
                     + (f'\n  FC refused: {e.fc_failure[:50]}' if e.fc_failure else '')
                     + ''.join(f'\n  collision with {x["with"]} at {x["t_s"]:.1f} s, '
                               f'{x["speed_mps"]:.1f} m/s' for x in e.collisions))
    for ax, name in ((top, 'top view: every track (truth) over its plan (dotted); '
                      'x: collision'),
                     (zoom, f'close-up: the tracks within {ZOOM_SPAN_M:g} m')):
        ax.set_xlabel('east [m]')
        ax.set_ylabel('north [m]')
        ax.set_aspect('equal', adjustable='box' if ax is zoom and small else 'datalim')
        ax.grid(True, alpha=0.3)
        ax.set_title(name, fontsize=10)
    top.legend(loc='best', fontsize=8)
    if small:
        pts = np.vstack(small)
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        pad = max(5.0, 0.1 * float(np.max(hi - lo)))
        zoom.set_xlim(lo[0] - pad, hi[0] + pad)
        zoom.set_ylim(lo[1] - pad, hi[1] + pad)
    alt.set_xlabel('sim time [s]')
    alt.set_ylabel('up [m]')
    alt.grid(True, alpha=0.3)
    alt.legend(loc='best', fontsize=8)
    alt.set_title('height; items reached: thin lines', fontsize=10)
    txt.axis('off')
    txt.text(0.0, 1.0, '\n'.join(lines), va='top', family='monospace', fontsize=8)
    s = judge.summary(0.0)
    fig.suptitle(f'{title}: {s["result"]}, {s["vehicles_complete"]}/{s["vehicle_count"]} '
                 'vehicles complete' + (f'; collided: {", ".join(s["collided"])}'
                                        if s['collided'] else ''))
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
