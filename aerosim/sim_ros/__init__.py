"""The ROS 2 runtime of aerosim nodes: node bases, parameters, QoS, conversions, main() (rclpy)."""
