"""aerosim sim_world: one simulation clock for any mix of vehicle kinds (quads, planes, boats)."""
