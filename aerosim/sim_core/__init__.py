"""aerosim sim_core: the pure foundation (frames, clock, geodesy, links, scenario; no rclpy)."""
