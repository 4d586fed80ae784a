"""aerosim sim_viz: rviz2/Foxglove views."""
