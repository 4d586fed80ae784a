"""Named QoS profiles (REP-2003): every node takes its QoS from here."""

from rclpy.qos import (DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy,
                       qos_profile_sensor_data)

# Publishers of sensor data and state: system default (reliable, keep last).
SENSOR_PUB = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
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
# Latched status / configuration: transient local so late joiners get the last value.
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     history=HistoryPolicy.KEEP_LAST, durability=DurabilityPolicy.TRANSIENT_LOCAL)
# /clock: as rclpy's time source subscribes to it.
CLOCK = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT,
                   history=HistoryPolicy.KEEP_LAST)


def matching(publishers, depth: int) -> QoSProfile:
    """A subscription QoS that receives from every publisher of a topic (rosbag2's rule).

    publishers: rclpy TopicEndpointInfo list (node.get_publishers_info_by_topic). Reliable if
    they all are, else best effort; transient local if they all are (latched topics), else
    volatile.
    """
    pubs = [p.qos_profile for p in publishers]
    reliable = bool(pubs) and all(q.reliability == ReliabilityPolicy.RELIABLE for q in pubs)
    latched = bool(pubs) and all(q.durability == DurabilityPolicy.TRANSIENT_LOCAL for q in pubs)
    return QoSProfile(
        depth=depth, history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)
