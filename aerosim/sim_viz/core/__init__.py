"""Pure viewer geometry and colours (no rclpy)."""
