"""Pure dynamics models (no rclpy)."""
