"""Commands addressed to the bridge: the MAVLink command protocol, recipient side (pure).

The bridge is a MAVLink component (our ids, 51:1): a COMMAND_LONG or COMMAND_INT addressed to
it gets one COMMAND_ACK with the command's result, sent to its sender (mavlink.io, Command
Protocol: the sender re-sends until it has one). Addressed to us means what PX4 takes as its
own (MavlinkReceiver::evaluate_target_ok): target_system ours and target_component ours or 0
(MAV_COMP_ID_ALL); a broadcast (target_system 0) or a command for another component is not
ours to answer.

Handled (MAV_RESULT_ACCEPTED, the message sent first and then the ACK, as PX4 does):
- MAV_CMD_REQUEST_MESSAGE (512) for a message the link offers: HOME_POSITION and HEARTBEAT on
  the HIL link, where seed 003 has the simulator send them; anything else, or anything on a
  separate mission link (nothing untargeted goes there: fc_session), MAV_RESULT_DENIED (PX4's
  handle_request_message_command: a message it cannot send is DENIED);
- MAV_CMD_GET_HOME_POSITION (410, deprecated; PX4 still answers it as that request).
Any other command: MAV_RESULT_UNSUPPORTED ("command is not supported (unknown)").
"""

from typing import Callable, Dict, Tuple

from mavlink_bridge.core.mav import mavlink

REQUEST_MESSAGE = mavlink.MAV_CMD_REQUEST_MESSAGE        # 512
GET_HOME = mavlink.MAV_CMD_GET_HOME_POSITION             # 410
HOME = mavlink.MAVLINK_MSG_ID_HOME_POSITION              # 242
Offers = Dict[int, Callable[[], object]]   # message id -> a function making that message


def for_us(m, ours: Tuple[int, int]) -> bool:
    """True if the command m is addressed to us (PX4's evaluate_target_ok, default case)."""
    return m.target_system == ours[0] and m.target_component in (ours[1], 0)


def command_name(command: int) -> str:
    """MAV_CMD value -> its name (or the number)."""
    e = mavlink.enums['MAV_CMD'].get(command)
    return e.name if e else str(command)


def answer(mav, m, offers: Offers) -> Tuple[list, int]:
    """The messages answering command m (its result last, a COMMAND_ACK) and the result.

    offers: the messages this link sends on request (message id -> maker).
    """
    out: list = []
    if m.command in (REQUEST_MESSAGE, GET_HOME):
        want = HOME if m.command == GET_HOME else int(round(m.param1))
        make = offers.get(want)
        if make is not None:
            out.append(make())
            result = mavlink.MAV_RESULT_ACCEPTED
        else:
            result = mavlink.MAV_RESULT_DENIED
    else:
        result = mavlink.MAV_RESULT_UNSUPPORTED
    out.append(mav.command_ack_encode(m.command, result, 0, 0, m.get_srcSystem(),
                                      m.get_srcComponent()))
    return out, result
