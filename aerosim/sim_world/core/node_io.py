"""What world_node takes and says, as data (pure): an IMC vehicle's holds, its log lines.

The holds of an AutopilotCommand to a vehicle flown over IMC are checked here (a refusal is a
FieldError naming the field); the log lines of the world's members, contacts and deck events
are written here, so a test reads them without ROS.
"""

import math
from typing import Optional, Sequence, Tuple

from sim_core.members import Member
from sim_core.units import KNOT_MPS
from sim_core.validate import number
from sim_world.core.decks import DeckEvent
from sim_world.core.world import GROUND, WATER, Event

MAX_SPEED_KT = 100.0       # largest |airspeed_setpoint_kts| a boat takes [kn] (as usv_node)


def imc_holds(heading_hold: bool, heading_setpoint_deg: float, airspeed_hold: bool,
              airspeed_setpoint_kts: float) -> Tuple[Optional[float], Optional[float]]:
    """(heading [deg] or None, speed [m/s] or None) of an AutopilotCommand's holds.

    FieldError if a held setpoint is not finite, or the speed is beyond MAX_SPEED_KT.
    """
    if airspeed_hold:
        number(airspeed_setpoint_kts, 'airspeed_setpoint_kts', -MAX_SPEED_KT, MAX_SPEED_KT)
    if heading_hold:
        number(heading_setpoint_deg, 'heading_setpoint_deg')
    return (heading_setpoint_deg if heading_hold else None,
            airspeed_setpoint_kts * KNOT_MPS if airspeed_hold else None)


def members_text(members: Sequence[Member]) -> str:
    """The world's vehicles, for the start-up line: /quad0 (multirotor, px4, link 0), ..."""
    return ', '.join(f'/{m.name} ({m.kind}, {m.controller}'
                     + (f', link {m.link})' if m.over_mavlink else ')') for m in members)


def collision_text(event: Event, count: int) -> str:
    """The warning of a contact or impact; count: the world's so far."""
    other = f'the {event.other}' if event.other in (GROUND, WATER) else '/' + event.other
    return (f'collision at t = {event.t_ns * 1e-9:.3f} s: /{event.vehicle} and {other} at '
            f'{event.closing_speed:.1f} m/s ({count} so far)')


def deck_text(e: DeckEvent) -> str:
    """The log line of a touchdown on, lift-off from or slide off a deck."""
    detail = (f' at {e.normal_speed:.2f} m/s down, {math.hypot(*e.pad_xy):.2f} m from the '
              f'pad centre (x {e.pad_xy[0]:+.2f}, y {e.pad_xy[1]:+.2f} m)'
              if e.what == 'touchdown' else '')
    where = 'the deck' if e.what == 'slid off' else 'on the deck'
    return f'/{e.vehicle} {e.what} {where} of /{e.deck} at t = {e.t_ns * 1e-9:.3f} s{detail}'
