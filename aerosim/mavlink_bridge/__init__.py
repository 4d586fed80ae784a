"""aerosim mavlink_bridge."""
