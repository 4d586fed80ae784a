"""Named QoS profiles (REP-2003): every node takes its QoS from here."""

from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    QoSProfile,
    ReliabilityPolicy,
    qos_profile_sensor_data,
)

# Publishers of sensor data and state: system default (reliable, keep last), with a history
# of 100 (0.4 s of 250 Hz IMU) so a reliable reader that stalls that long on a loaded machine
# (a recorder, a test probe) loses nothing: a reliable KEEP_LAST writer overwrites samples a
# slow reader has not acknowledged yet.
SENSOR_PUB = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                        history=HistoryPolicy.KEEP_LAST)
# Publishers for viewers and large or numerous messages (images, markers, per-boat odometry of a
# swarm, diagnostics): the ROS default history of 10; a viewer wants the newest data.
VIEW_PUB = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                      history=HistoryPolicy.KEEP_LAST)
# Subscribers of sensor data: best effort, small queue (matches reliable and best-effort pubs).
SENSOR_SUB = qos_profile_sensor_data
# Commands (effector commands in the control loop): reliable, keep last.
COMMAND = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                     history=HistoryPolicy.KEEP_LAST)
# The simulation pipeline (vehicle_state from dynamics to sensors/camera/bridges): reliable with
# a deep queue, so a consumer that stalls briefly (a loaded machine) loses no step.
STATE = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE,
                   history=HistoryPolicy.KEEP_LAST)
# An ordered stream that must lose nothing (the swarm's UI inputs and their results): reliable
# with a history far above the sender's window of unanswered messages, so the history never
# overwrites one a reader has not taken.
INPUT = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE,
                   history=HistoryPolicy.KEEP_LAST)
# Latched status / configuration: transient local so late joiners get the last value.
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     history=HistoryPolicy.KEEP_LAST, durability=DurabilityPolicy.TRANSIENT_LOCAL)
# /clock: as rclpy's time source subscribes to it.
CLOCK = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT,
                   history=HistoryPolicy.KEEP_LAST)


def matching(policies, depth: int) -> QoSProfile:
    """A QoS that talks with every endpoint of a topic (rosbag2's rule).

    policies: (reliability, durability) of each publisher, as rmw values (rclpy's enums, or
    the same numbers from a bag). Reliable if they all are, else best effort; transient local
    if they all are (latched topics), else volatile.
    """
    policies = [(int(r), int(d)) for r, d in policies]
    reliable = bool(policies) and all(r == ReliabilityPolicy.RELIABLE for r, _ in policies)
    latched = bool(policies) and all(d == DurabilityPolicy.TRANSIENT_LOCAL for _, d in policies)
    return QoSProfile(
        depth=depth, history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)
