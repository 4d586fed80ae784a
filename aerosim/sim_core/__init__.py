"""aerosim sim_core."""
