"""PX4's MAVLink telemetry streams: mavlink_stream.cpp and mavlink_main.cpp (v1.16).

Part of the PX4 stand-in (px4_sitl.py), src/modules/mavlink/:
- the payload link's telemetry: onboard mode (configure_streams_to_default), each stream at
  its rate scaled to the link's 4000 B/s (update_rate_mult), one message per datagram, on PX4's
  clock; MAV_CMD_SET_MESSAGE_INTERVAL on that link sets or stops a stream (Streams).
"""

import collections
import math

from mavlink_bridge.core.mav import mavlink

# The onboard-mode streams of PX4's payload link that a SITL quad has data for, at their
# configured rates [Hz] (mavlink_main.cpp, configure_streams_to_default, MAVLINK_MODE_ONBOARD;
# these are the ones v1.16 sent aerosim there). GPS_RAW_INT is "unlimited": every GPS update.
ONBOARD_STREAMS = {
    'TIMESYNC': 10.0, 'HIGHRES_IMU': 50.0, 'LOCAL_POSITION_NED': 30.0, 'ATTITUDE': 100.0,
    'ALTITUDE': 10.0, 'ODOMETRY': 30.0, 'ATTITUDE_QUATERNION': 50.0, 'ATTITUDE_TARGET': 10.0,
    'BATTERY_STATUS': 0.5, 'ESTIMATOR_STATUS': 1.0, 'EXTENDED_SYS_STATE': 5.0,
    'GLOBAL_POSITION_INT': 50.0, 'GPS_GLOBAL_ORIGIN': 1.0, 'GPS_RAW_INT': 10.0,
    'HOME_POSITION': 0.5, 'OPEN_DRONE_ID_LOCATION': 1.0, 'OPEN_DRONE_ID_SYSTEM': 1.0,
    'PING': 1.0, 'POSITION_TARGET_GLOBAL_INT': 10.0, 'POSITION_TARGET_LOCAL_NED': 10.0,
    'SCALED_PRESSURE': 1.0, 'SERVO_OUTPUT_RAW': 10.0, 'SYS_STATUS': 5.0, 'SYSTEM_TIME': 1.0,
    'VFR_HUD': 10.0, 'VIBRATION': 0.5,
}
CONST_RATE = ('PING',)              # const_rate() streams: not scaled to the data rate
PAYLOAD_DATARATE = 4000             # B/s: `mavlink start ... -r 4000` (px4-rc.mavlink)
NON_PAYLOAD_BYTES = 12              # MAVLINK_NUM_NON_PAYLOAD_BYTES (v2 header + checksum)


def filler_message(name: str):
    """A pymavlink message of that name with every field 1 (or 'x').

    Telemetry whose content no receiver here reads; not zeros: MAVLink 2 drops a payload's
    trailing zeros, and the frames would be shorter than PX4's.
    """
    cls = getattr(mavlink, f'MAVLink_{name.lower()}_message')
    lengths = dict(zip(cls.ordered_fieldnames, cls.array_lengths))
    args = []
    for field, ctype in zip(cls.fieldnames, cls.fieldtypes):
        n = lengths[field]
        if ctype == 'char':
            args.append(b'x' * max(n, 1))
        else:
            args.append([1] * n if n else 1)
    return cls(*args)


class Streams:
    """A PX4 MAVLink instance's telemetry streams (mavlink_stream.cpp, mavlink_main.cpp).

    Each stream is due every 1/rate s of PX4's clock, its interval divided by the link's rate
    multiplier unless it is constant-rate (Mavlink::update_rate_mult: the data rate over the
    streams' bytes per second, at most 1 without flow control; sizes are the full messages,
    get_size()). One message per datagram (send_start/send_finish). set_interval() is
    MavlinkReceiver::set_message_interval on this link: interval < 0 stops the stream, 0
    restores its default, > 0 sets it [µs]; HEARTBEAT, param3/param4/param7 set, or no such
    stream: refused (MAV_RESULT_FAILED).
    """

    def __init__(self, rates: dict, datarate: float):
        """rates: stream name -> Hz; datarate: the link's B/s."""
        self.default = dict(rates)
        self.rates = dict(rates)
        self.datarate = datarate
        self.ids = {getattr(mavlink, f'MAVLINK_MSG_ID_{n}'): n for n in rates}
        self.msgs = {n: filler_message(n) for n in rates}
        self.sizes = {n: m.unpacker.size + NON_PAYLOAD_BYTES for n, m in self.msgs.items()}
        self.last_us = dict.fromkeys(rates, 0)
        self.sent = collections.Counter()
        self.mult = 1.0
        self._rate_mult()

    def _rate_mult(self):
        scaled = sum(self.sizes[n] * r for n, r in self.rates.items()
                     if r > 0 and n not in CONST_RATE)
        const = sum(self.sizes[n] * r for n, r in self.rates.items()
                    if r > 0 and n in CONST_RATE)
        self.mult = min(1.0, (self.datarate - const) / scaled) if scaled > 0 else 1.0

    def due(self, now_us: int) -> list:
        """The messages due at PX4 time now_us (MavlinkStream::update).

        On time, the next one is due an interval after the last deadline: the average holds.
        """
        out = []
        for n, rate in self.rates.items():
            if rate <= 0.0:
                continue
            interval = 1e6 / rate / (1.0 if n in CONST_RATE else self.mult)
            dt = now_us - self.last_us[n]
            if dt >= interval:
                self.last_us[n] = self.last_us[n] + interval if dt < 1.5 * interval else now_us
                self.sent[n] += 1
                out.append(self.msgs[n])
        return out

    def set_interval(self, msgid: int, interval_us: float, p3: float, p4: float,
                     p7: float) -> bool:
        """MAV_CMD_SET_MESSAGE_INTERVAL on this link: True if done."""
        if msgid == mavlink.MAVLINK_MSG_ID_HEARTBEAT or msgid not in self.ids:
            return False
        if any(math.isfinite(p) and int(p + 0.5) != 0 for p in (p3, p4, p7)):
            return False
        n = self.ids[msgid]
        self.rates[n] = 0.0 if interval_us < -1e-5 else \
            1e6 / interval_us if interval_us > 1e-5 else self.default[n]
        self._rate_mult()
        return True

    def active(self) -> list:
        """The streams still sending."""
        return sorted(n for n, r in self.rates.items() if r > 0.0)
