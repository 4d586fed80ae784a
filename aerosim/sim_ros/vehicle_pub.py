"""One vehicle's state out: vehicle_state every step; odom and actor_state decimated.

Used by dynamics_node, usv_node and plane_node.
"""

from nav_msgs.msg import Odometry

from aerosim_msgs.msg import ActorState, VehicleState
from sim_core.frames import (
    VehicleSample,
    euler_ned_to_quat,
    frd_to_flu,
    ned_to_enu,
    q_ned_frd_to_enu_flu,
    quat_rotate_inverse,
)
from sim_dynamics.core.usv import boat_state_ned
from sim_ros import qos
from sim_ros.convert import set_quat, set_vec3, time_ns


class VehicleStatePublisher:
    """Publishes VehicleState, nav_msgs/Odometry and ActorState of one vehicle (ENU/FLU).

    The messages are reused (filled in place): this runs on every integration step. A topic
    nobody subscribes to is not filled nor published (each publish costs the step ~5-15 µs).
    """

    def __init__(self, node, world_frame_id: str, body_frame_id: str, prefix: str = '',
                 state_qos=qos.STATE):
        """Create the <prefix>vehicle_state, odom and actor_state publishers (relative)."""
        self.pub_state = node.create_publisher(VehicleState, f'{prefix}vehicle_state',
                                               state_qos)
        self.pub_odom = node.create_publisher(Odometry, f'{prefix}odom', qos.SENSOR_PUB)
        # AeroSim's ActorState (the pose alone), at the odometry's rate
        self.pub_actor = node.create_publisher(ActorState, f'{prefix}actor_state',
                                               qos.SENSOR_PUB)
        self.state = VehicleState()
        self.state.header.frame_id = world_frame_id
        self.odom = Odometry()
        self.odom.child_frame_id = body_frame_id

    def publish(self, stamp, s: VehicleSample, alpha_flu, odom: bool):
        """Publish the sample s at stamp; odom and actor_state too when odom is True.

        alpha_flu: angular acceleration [rad/s^2] in the body frame. The odometry twist is the
        velocity over ground in the body frame.
        """
        want_state = self.pub_state.get_subscription_count()
        want_odom = odom and self.pub_odom.get_subscription_count()
        want_actor = odom and self.pub_actor.get_subscription_count()
        if not (want_state or want_odom or want_actor):
            return
        p_enu, v_enu, q_enu_flu, a_enu, w_flu = s.p_enu, s.v_enu, s.q_enu_flu, s.a_enu, s.w_flu
        m = self.state
        m.header.stamp = stamp
        m.state.header = m.header
        set_vec3(m.state.pose.position, p_enu)
        set_quat(m.state.pose.orientation, q_enu_flu)
        set_vec3(m.velocity, v_enu)
        set_vec3(m.angular_velocity, w_flu)
        set_vec3(m.acceleration, a_enu)
        set_vec3(m.angular_acceleration, alpha_flu)
        if want_state:
            self.pub_state.publish(m)
        if want_odom:
            o = self.odom
            o.header = m.header
            o.pose.pose = m.state.pose
            set_vec3(o.twist.twist.linear, quat_rotate_inverse(q_enu_flu, v_enu))
            o.twist.twist.angular = m.angular_velocity
            self.pub_odom.publish(o)
        if want_actor:
            self.pub_actor.publish(m.state)

    def publish_boat(self, stamp, boat, i: int, odom: bool):
        """Publish boat i of a BoatSwarm (sim_dynamics.core.usv) at stamp (NED -> ENU/FLU)."""
        p, v, euler, w_frd, a = boat_state_ned(boat, i)
        s = VehicleSample(time_ns(stamp), ned_to_enu(p), ned_to_enu(v),
                          q_ned_frd_to_enu_flu(euler_ned_to_quat(*euler)), ned_to_enu(a),
                          frd_to_flu(w_frd))
        self.publish(stamp, s, (0.0, 0.0, -float(boat.r_dot[i])), odom)
