"""Shared helpers for aerosim's ROS 2 nodes (the only part of sim_core that imports rclpy)."""
