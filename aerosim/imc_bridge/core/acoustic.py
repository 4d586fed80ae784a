"""Simulated underwater acoustic link for IMC UASimulation (pure, no rclpy).

A frame sent at sim time t over range R [m] arrives at t + R / c + 8 n / speed, c the sound
speed [m/s], n the payload length [bytes], speed the transmission speed [bit/s] (DATA). A
PING reaches the addressee after R / c and its PING_REPLY reaches the sender another R / c
later (a two-way travel time, what an acoustic modem's range measurement is built on). Beyond
the maximum range nothing arrives; within it each leg arrives with the probability of the
passive sonar equation's margin, times (1 - loss_probability) (one seeded draw per leg:
reproducible runs):
    TL(R) = 20 log10(R) + alpha(f) R / 1000        spherical spreading + Thorp's absorption,
    alpha(f) = 0.11 f^2/(1+f^2) + 44 f^2/(4100+f^2) + 2.75e-4 f^2 + 0.003  [dB/km, f in kHz]
    SNR = SL - TL(R) - NL,  P(arrive) = 1 / (1 + exp(-(SNR - DT) / SPREAD_DB))
SL the modem's source level, NL the noise in its band, DT the SNR at which half the frames
decode (the defaults, a 25 kHz modem of SL 185 dB re 1 uPa at 1 m in 90 dB of noise with DT
10 dB: certain to 1.5 km, half at 2.7 km, lost beyond 4 km).
"""

from dataclasses import dataclass
import heapq
import itertools
import math
import random
from typing import Any, List

from sim_core.errors import ConfigError

DATA, PING, PING_REPLY = 0, 1, 2      # IMC UASimulation.TypeEnum values


@dataclass(frozen=True)
class AcousticParams:
    """Acoustic channel parameters."""

    sound_speed_mps: float = 1500.0
    max_range_m: float = 1000.0
    loss_probability: float = 0.0
    seed: int = 0
    frequency_khz: float = 25.0
    source_level_db: float = 185.0
    noise_level_db: float = 90.0
    detection_snr_db: float = 10.0

    def __post_init__(self):
        """Check the ranges (ConfigError naming the field)."""
        if not (math.isfinite(self.sound_speed_mps) and 1300.0 <= self.sound_speed_mps <= 1700.0):
            raise ConfigError(f'sound_speed_mps: must be in [1300, 1700] (sea water), got '
                              f'{self.sound_speed_mps!r}')
        if not (math.isfinite(self.max_range_m) and 0.0 < self.max_range_m <= 1e5):
            raise ConfigError(f'max_range_m: must be in (0, 100000], got {self.max_range_m!r}')
        if not 0.0 <= self.loss_probability <= 1.0:
            raise ConfigError(f'loss_probability: must be in [0, 1], got '
                              f'{self.loss_probability!r}')
        for name, lo, hi in (('frequency_khz', 0.1, 1000.0), ('source_level_db', 0.0, 250.0),
                             ('noise_level_db', 0.0, 200.0), ('detection_snr_db', -50.0, 100.0)):
            v = getattr(self, name)
            if not (math.isfinite(v) and lo <= v <= hi):
                raise ConfigError(f'{name}: must be in [{lo:g}, {hi:g}], got {v!r}')


SPREAD_DB = 2.0                 # the decode probability's width around DT [dB]


def thorp_db_per_km(f_khz: float) -> float:
    """Thorp's absorption of sea water [dB/km] at f_khz [kHz]."""
    f2 = f_khz * f_khz
    return 0.11 * f2 / (1.0 + f2) + 44.0 * f2 / (4100.0 + f2) + 2.75e-4 * f2 + 0.003


def arrival_probability(p: AcousticParams, range_m: float) -> float:
    """The chance a frame over range_m [m] decodes (the sonar equation's margin)."""
    r = max(1.0, range_m)
    tl = 20.0 * math.log10(r) + thorp_db_per_km(p.frequency_khz) * r / 1000.0
    margin = p.source_level_db - tl - p.noise_level_db - p.detection_snr_db
    return 1.0 / (1.0 + math.exp(-margin / SPREAD_DB)) if margin > -700.0 else 0.0


@dataclass(frozen=True)
class Delivery:
    """A frame arriving at t_s [s] (sim): kind DATA / PING_REPLY, from src to dst.

    reply_to: opaque sender handle (e.g. its UDP address) for a PING_REPLY's way back.
    """

    t_s: float
    kind: int
    src: int
    dst: int
    speed_bps: int
    data: bytes
    range_m: float
    delay_s: float
    reply_to: object = None


class AcousticLink:
    """Frames in flight, delivered in time order."""

    def __init__(self, params: AcousticParams = AcousticParams()):
        """Channel with params; an empty queue."""
        self.params = params
        self._rng = random.Random(params.seed)
        self._queue: List[Any] = []
        self._seq = itertools.count()
        self.sent = 0
        self.lost = 0
        self.out_of_range = 0

    def _lost(self, range_m: float) -> bool:
        p = self.params
        return self._rng.random() >= (1.0 - p.loss_probability) * arrival_probability(p, range_m)

    def transmit(self, t_s: float, kind: int, src: int, dst: int, speed_bps: int, data: bytes,
                 range_m: float, reply_to=None) -> str:
        """Send a DATA or PING frame at sim time t_s [s]; returns what happens to it.

        'queued', 'out of range' or 'lost'. Raises ValueError for what the channel cannot
        carry (an unknown kind, DATA at 0 bit/s, a non-finite range).
        """
        if kind not in (DATA, PING):
            raise ValueError(f'type {kind}: only DATA (0) and PING (1) are transmitted')
        if not (math.isfinite(range_m) and range_m >= 0.0):
            raise ValueError(f'range {range_m!r} m')
        if kind == DATA and speed_bps <= 0:
            raise ValueError('DATA needs a transmission speed > 0 bit/s')
        self.sent += 1
        if range_m > self.params.max_range_m:
            self.out_of_range += 1
            return 'out of range'
        c = self.params.sound_speed_mps
        if kind == DATA:
            if self._lost(range_m):
                self.lost += 1
                return 'lost'
            delay = range_m / c + 8.0 * len(data) / speed_bps
            self._push(Delivery(t_s + delay, DATA, src, dst, speed_bps, bytes(data), range_m,
                                delay, reply_to))
            return 'queued'
        if self._lost(range_m) or self._lost(range_m):     # the ping, then the reply
            self.lost += 1
            return 'lost'
        delay = 2.0 * range_m / c
        # the addressee (dst) answers the sender (src)
        self._push(Delivery(t_s + delay, PING_REPLY, dst, src, speed_bps, b'', range_m, delay,
                            reply_to))
        return 'queued'

    def _push(self, d: Delivery) -> None:
        heapq.heappush(self._queue, (d.t_s, next(self._seq), d))

    def due(self, t_s: float):
        """The deliveries whose arrival time is <= t_s [s], in arrival order (removed)."""
        out = []
        while self._queue and self._queue[0][0] <= t_s:
            out.append(heapq.heappop(self._queue)[2])
        return out

    def clear(self) -> None:
        """Drop every frame in flight (sim reset)."""
        self._queue.clear()

    def __len__(self) -> int:
        """Frames in flight."""
        return len(self._queue)
