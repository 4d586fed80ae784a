"""The world's pure parts: the vehicle-kind registry, stepping any mix of kinds, contacts."""
