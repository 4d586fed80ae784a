"""IMC bridge core: imcpy-based codec and state mapping (no rclpy)."""
