"""Conversions between sim-core values and ROS messages."""

import importlib

from builtin_interfaces.msg import Time

from sim_core.frames import VehicleSample
from sim_core.timeutil import NS_PER_S


def time_msg(t_ns: int) -> Time:
    """Sim time [ns] -> builtin_interfaces/Time."""
    sec, nsec = divmod(int(t_ns), NS_PER_S)
    return Time(sec=sec, nanosec=nsec)


def time_ns(stamp) -> int:
    """builtin_interfaces/Time -> sim time [ns]."""
    return stamp.sec * NS_PER_S + stamp.nanosec


def set_vec3(v, xyz):
    """Fill a geometry_msgs Vector3/Point from a 3-sequence; returns v."""
    v.x, v.y, v.z = float(xyz[0]), float(xyz[1]), float(xyz[2])
    return v


def set_quat(q, wxyz):
    """Fill a geometry_msgs Quaternion from (w, x, y, z); returns q."""
    q.w, q.x, q.y, q.z = float(wxyz[0]), float(wxyz[1]), float(wxyz[2]), float(wxyz[3])
    return q


def vehicle_state_arrays(msg) -> VehicleSample:
    """aerosim_msgs/VehicleState -> its VehicleSample."""
    pose = msg.state.pose
    o, p = pose.orientation, pose.position
    v, a, w = msg.velocity, msg.acceleration, msg.angular_velocity
    return VehicleSample(time_ns(msg.header.stamp), (p.x, p.y, p.z), (v.x, v.y, v.z),
                         (o.w, o.x, o.y, o.z), (a.x, a.y, a.z), (w.x, w.y, w.z))


def message_class(type_name: str):
    """'pkg/msg/Type' -> the Python message class."""
    pkg, kind, name = type_name.split('/')
    return getattr(importlib.import_module(f'{pkg}.{kind}'), name)

