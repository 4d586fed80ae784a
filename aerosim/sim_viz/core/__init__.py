"""Pure viewer geometry and summary plots (no rclpy)."""
