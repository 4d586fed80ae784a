"""Who drives the boat over IMC, with which signs and clocks (pure, no rclpy).

Control level. DUNE drives a conventional ASV at one of two levels:
- actuators: SetThrusterActuation and SetServoPosition (DUNE's Control.ASV.Conventional.Speed
  and .Heading tasks close the loops on DUNE's own navigation);
- guidance: DesiredSpeed and DesiredHeading, closed by our boat's speed and heading holds.
DUNE's UDP transport also forwards its Desired* to every node (header dst 0xFFFF) as telemetry
for Neptus while its own controllers steer with actuator commands: obeying both makes two
controllers fight. So one level is in force at a time (``ControlArbiter``): its messages are
taken broadcast or addressed; a message of the other level switches the level only when it is
addressed to our system id (a deliberate command), and is otherwise ignored and counted.

Signs. DUNE's heading controller commands ``rudder = -PID(psi_d - psi)`` (src/Control/ASV/
Conventional/Heading/Task.cpp): a positive SetServoPosition turns the bow to port, as DUNE's
own plant takes it (Simulators/VSIM fins, the SNAME convention of Fossen's models: positive
rudder angle, negative yaw moment). AeroSim's rudder_cmd_angle_rad has the same sense
(positive = bow to port). ``rudder_positive`` = 'starboard' serves the other convention.
SetThrusterActuation positive = ahead (DUNE's Simulators/Motor: RPM of the act's sign).

Timestamps. IMC header timestamps are UTC seconds for DUNE's logs and Neptus.
"""

import time

ACTUATORS, GUIDANCE = 'actuators', 'guidance'
LEVELS = (ACTUATORS, GUIDANCE)
# IMC broadcast addresses: 0xFFFF ("any", DUNE's default dst) and 0xFFF0 (etc/common/
# imc-addresses.ini: broadcast).
BROADCAST = 0xFFFF
BROADCASTS = (0xFFFF, 0xFFF0)
RUDDER_SENSES = ('port', 'starboard')
THRUSTER_SENSES = ('ahead', 'astern')
TIMESTAMP_MODES = ('utc', 'sim_utc', 'sim')


class ControlArbiter:
    """One IMC control level at a time.

    level: the level in force (ACTUATORS or GUIDANCE); our_id: our IMC system id.
    """

    def __init__(self, level: str, our_id: int):
        """Start at level (ValueError if not one of LEVELS)."""
        if level not in LEVELS:
            raise ValueError(f"control_level: 'actuators' or 'guidance', got {level!r}")
        self.level = level
        self.our_id = our_id
        self.switches = 0

    def decide(self, level: str, dst: int):
        """A control message of `level` for header dst: (take it, the level switched now).

        Messages of the level in force are taken (broadcast or addressed to us); a message of
        the other level addressed to our id switches the level and is taken; a broadcast one
        is not (the caller counts it).
        """
        if level == self.level:
            return True, False
        if dst == self.our_id:
            self.level = level
            self.switches += 1
            return True, True
        return False, False


def rudder_aerosim(value_rad: float, positive: str = 'port') -> float:
    """SetServoPosition value [rad] -> AeroSim rudder_cmd_angle_rad (positive = bow to port).

    positive: the sense of a positive IMC value, 'port' (DUNE's) or 'starboard'.
    """
    return value_rad if positive == 'port' else -value_rad


def throttle_aerosim(value: float, positive: str = 'ahead') -> float:
    """SetThrusterActuation value [-1, 1] -> throttle_cmd (positive = ahead)."""
    return value if positive == 'ahead' else -value


class Stamper:
    """IMC header timestamps [s] in one of TIMESTAMP_MODES.

    utc: the wall clock (UTC) when the message is sent, what DUNE's logs and Neptus expect
    (DUNE's AHRS simulator copies our stamp into its EulerAngles); sim_utc: the UTC time at
    start + sim time (keeps the sim spacing of samples; drifts from the wall clock whenever
    the sim is not exactly real time); sim: sim seconds.
    """

    def __init__(self, mode: str, wall=time.time):
        """mode: one of TIMESTAMP_MODES (ValueError otherwise); wall: the UTC clock [s]."""
        if mode not in TIMESTAMP_MODES:
            raise ValueError(f"timestamps: 'utc', 'sim_utc' or 'sim', got {mode!r}")
        self.mode = mode
        self._wall = wall
        self._t0 = wall() if mode == 'sim_utc' else 0.0

    def __call__(self, sim_s: float) -> float:
        """Timestamp of a message about sim time sim_s [s], sent now."""
        if self.mode == 'utc':
            return self._wall()
        return sim_s + self._t0
