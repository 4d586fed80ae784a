"""aerosim sim_launch: graph descriptions, the pip-only runner, the launch_ros builder, the CLI."""
