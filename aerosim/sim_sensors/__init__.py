"""aerosim sim_sensors."""
