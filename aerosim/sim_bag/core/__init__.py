"""Pure bag helpers (no rclpy)."""
