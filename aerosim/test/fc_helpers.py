"""FC-side test helpers: PX4's ids, the messages we parse from the stand-in's frames."""

from mavlink_bridge.core.mav import new_mav

PX4 = (1, 1)


def parsed(frames: bytes, receiver=None):
    """The messages a receiver (ours, 51:1) parses from frames."""
    rx = receiver or new_mav(51, 1)
    return [m for m in rx.parse_buffer(frames) or [] if m.get_type() != 'BAD_DATA']
