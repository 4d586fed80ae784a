"""aerosim usv_bridge."""
