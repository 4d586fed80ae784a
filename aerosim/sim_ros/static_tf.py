"""A node's static transforms (its sensor frames in the body frame) on /tf_static.

Published with tf2_ros where it exists (a ROS install; the pip wheels have no tf2_ros or
tf2_msgs: the node then says so and goes on, nothing needs TF there). tf2_ros's Python
StaticTransformBroadcaster publishes each sendTransform() as one TFMessage on a latched
publisher of depth 1 (tf2_ros_py/tf2_ros/static_transform_broadcaster.py): a second call
would hide the first from later subscribers, so a node sends all of its frames at once.
"""

from geometry_msgs.msg import TransformStamped


def transform_msg(stamp, parent: str, child: str, xyz, q_wxyz) -> TransformStamped:
    """A TransformStamped parent -> child: translation [m], rotation quaternion (w, x, y, z)."""
    t = TransformStamped()
    t.header.stamp, t.header.frame_id, t.child_frame_id = stamp, parent, child
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = xyz
    r = t.transform.rotation
    r.w, r.x, r.y, r.z = q_wxyz
    return t


def publish_static(node, frames, broadcaster_cls=None):
    """Send frames [(parent, child, xyz, q_wxyz)] in one message; the broadcaster, or None.

    Keep the broadcaster as long as the node lives (its publisher holds the latched message).
    broadcaster_cls: tf2_ros.StaticTransformBroadcaster unless given.
    """
    if broadcaster_cls is None:
        try:
            from tf2_ros import StaticTransformBroadcaster as broadcaster_cls
        except ImportError:
            node.get_logger().info('static TF of ' + ', '.join(f[1] for f in frames) +
                                   ': off (no tf2_ros here; a ROS install has it)')
            return None
    stamp = node.get_clock().now().to_msg()
    b = broadcaster_cls(node)
    b.sendTransform([transform_msg(stamp, *f) for f in frames])
    return b
