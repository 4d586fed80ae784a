"""The autopilot and flight plans (pure, no rclpy)."""
