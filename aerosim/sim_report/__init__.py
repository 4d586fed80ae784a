"""aerosim sim_report: run reports of every vehicle kind (mission judged, tracks, plots)."""
