#!/usr/bin/env python3
"""Mission upload completion under datagram loss and reordering.

The real MissionServer (bridge) and the built-in FC's MissionClient, framed by pymavlink,
over a simulated link that drops and delays (reorders) messages. Prints, per loss rate, how
many of 1000 uploads completed on both ends and the re-sends they needed.
Usage (after scripts/setup.sh): python scripts/mission_loss.py
"""

from pathlib import Path
import sys

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'aerosim' / 'test'))
from test_mavlink_core import lossy_transfer  # noqa: E402 (the harness lives with its test)

from mavlink_bridge.core.mission import DONE  # noqa: E402

N = 1000
for loss in (0.0, 0.1, 0.2, 0.3):
    done, resent = 0, 0
    for seed in range(N):
        net = lossy_transfer(seed, loss)
        if net.server.state == DONE and net.client.complete:
            done += 1
        resent += net.server.resent + net.client.rerequests
    print(f'loss {loss:4.0%} each way, delays 0-50 ms: {done}/{N} uploads complete '
          f'({done / N:.1%}), {resent / N:.1f} re-sends per upload (1.5 s timeout, 5 retries)')
