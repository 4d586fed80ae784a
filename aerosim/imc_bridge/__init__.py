"""aerosim imc_bridge."""
