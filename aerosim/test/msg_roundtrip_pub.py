"""Publisher half of the round-trip test: publishes sample 0 of every aerosim_msgs type."""

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.qos import DurabilityPolicy, QoSProfile

from msg_fill import aerosim_types, sample


def main():
    rclpy.init()
    node = rclpy.create_node('msg_roundtrip_pub')
    qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    pubs = [(node.create_publisher(cls, f'rt/{name}', qos), sample(name, cls))
            for name, cls in aerosim_types().items()]
    for pub, msg in pubs:
        pub.publish(msg)
    node.get_logger().info(f'published {len(pubs)} types')
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    main()
