"""aerosim sim_autopilot: the fixed-wing autopilot of AeroSim's AutopilotCommand."""
