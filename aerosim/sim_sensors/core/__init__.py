"""Pure sensor models (no rclpy)."""
