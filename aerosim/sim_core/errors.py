"""Exceptions shared by aerosim modules."""


class ConfigError(ValueError):
    """A configuration value (YAML file, parameter, init message) is invalid.

    The message always names the offending field, e.g. ``vehicle.mass: must be > 0, got -1``.
    """
