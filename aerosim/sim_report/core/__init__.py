"""Pure report cores (no rclpy): mission judging and plots, boat and swarm tracks."""
