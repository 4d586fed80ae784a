"""Exceptions shared by aerosim modules."""


class ConfigError(ValueError):
    """A configuration value (YAML file, parameter, init message) is invalid.

    The message always names the offending field, e.g. ``vehicle.mass: must be > 0, got -1``.
    """


class ModelDiverged(RuntimeError):
    """A vehicle model's state ran away (non-finite, or faster than any vehicle of its kind).

    The time source stops the run with the message instead of publishing (or packing into a
    HIL_SENSOR) numbers no sensor could give.
    """
