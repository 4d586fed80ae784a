"""MAVLink HIL protocol logic (pure, no rclpy): framing, HIL messages, mixer, missions, links."""
