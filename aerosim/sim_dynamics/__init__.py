"""aerosim sim_dynamics."""
