"""MAVLink test helpers: the simulator's and the FC's ids, a frame through real framing."""

from mavlink_bridge.core.mav import new_mav

SIM = (51, 25)
FC = (1, 1)


def wire(msg, sender):
    """Pack with the sender's ids and parse back with a fresh MAVLink 2 parser."""
    data = msg.pack(sender)
    rx = new_mav(*FC)
    (out,) = rx.parse_buffer(data)
    assert data[0] == 0xFD   # MAVLink 2 frame
    return out
