"""USV swarm protocol (seed 004), pure: codec and validation."""
