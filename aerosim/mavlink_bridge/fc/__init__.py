"""The built-in flight controller: estimator, control, mission execution, node."""
