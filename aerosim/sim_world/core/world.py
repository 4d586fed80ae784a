"""One world: every member's model stepped on one clock, one contact model (pure, no rclpy).

A World holds each member's model (sim_core.kinds.VehicleModel: a quad, a plane, a boat, any
mix) and its in-process controller if it has one (Controller: its kind's, kinds/<name>/
controllers.py). One step
(``step(dt_s, t_ns)``, t_ns the time the step starts):

1. each in-process controller whose time has come (its own rate_hz, at most once a step)
   reads its model's state at t_ns and sets its command; vehicles flown over a link keep
   the command their bridge set (the world node sets it on the model);
2. every model integrates dt_s with its command in force;
3. contacts and impacts at t_ns + dt (the events are stamped so):
   - the surface, for air vehicles (their kind's medium AIR): an airborne vehicle that
     comes to rest on the surface (VehicleModel.on_surface) over the ground and faster than
     collision.GROUND_IMPACT_MPS down is a ground impact (collision.ground_impact, as a
     quad fleet's); over water, any touchdown is a water impact (ditching: a quad or a
     plane is lost at any speed). The scenario has no land/water map: the world is given
     one (``water(e, n) -> bool``); without one the surface z = 0 is ground everywhere.
     Water and ground kinds (medium WATER, GROUND: a boat, a rover) are carried by the
     water or the ground at z = 0: never an impact;
   - between any two vehicles of any kinds, one contact model: spheres of each model's
     radius_m and mass_kg (sim_dynamics.core.collision.contact: the impulse along the line
     of centres with collision.RESTITUTION, momentum conserved, pushed apart to touching in
     inverse proportion to the masses; a boat takes only the horizontal part, the water the
     rest). A pair is reported once when it starts touching; it stays touching (no new event)
     while its centres are closer than the sum of the radii plus TOUCH_MARGIN_M, so that a
     vehicle resting on another (a quad landed on a boat) is one event, not one a step.

Events: ``Event(t_ns, vehicle, other, closing_speed, point)``, other a vehicle's name,
GROUND or WATER, as /sim/collisions carries them (aerosim_msgs/Collision).
"""

from dataclasses import dataclass
import math
from typing import Callable, Dict, List, Optional, Protocol, Sequence, Set, Tuple

from sim_core.frames import VehicleSample
from sim_core.kinds import AIR, VehicleModel, info
from sim_core.members import Member
from sim_dynamics.core.collision import contacts, ground_impact
from sim_world.core.decks import TOUCHDOWN, DeckEvent, Decks

GROUND, WATER = 'ground', 'water'
TOUCH_MARGIN_M = 0.1            # a touching pair parts beyond the sum of the radii plus this [m]
NS_PER_S = 1_000_000_000

WaterMap = Callable[[float, float], bool]       # (east, north) [m] -> over water


def open_water(e: float, n: float) -> bool:
    """A water map: water everywhere (a world at sea)."""
    return True


class Controller(Protocol):
    """An in-process controller of one vehicle (the world updates it at rate_hz)."""

    rate_hz: float                  # updates per second of sim time [Hz]
    log: List[Tuple[float, str]]    # (sim time [s], text) for the node's log; it clears them

    @property
    def done(self) -> bool:
        """Its mission is complete."""

    @property
    def item(self) -> int:
        """The index of the mission item it flies (len(mission) when done)."""

    def reset(self) -> None:
        """Back to the mission's start (the model is reset by the world)."""

    def update(self, t_ns: int) -> None:
        """Read the model's state at sim time t_ns [ns] and set its command."""


@dataclass(frozen=True)
class Event:
    """A contact between two vehicles, or an impact on the surface."""

    t_ns: int                       # sim time [ns] of the step that found it
    vehicle: str                    # a member's name
    other: str                      # another member's name, GROUND or WATER
    closing_speed: float            # m/s: along the line of centres, or down at touchdown
    point: Tuple[float, float, float]   # m, ENU: on the line of centres, or the vehicle's


@dataclass
class Body:
    """One member in the world: its model, its in-process controller, its surface state."""

    member: Member
    model: VehicleModel
    controller: Optional[Controller] = None
    air: bool = True                # medium 'air': ground and water impacts
    airborne: bool = False
    due_ns: int = 0                 # the controller's next update [ns]


class World:
    """Members' models on one clock, their in-process controllers, one contact model."""

    def __init__(self, members: Sequence[Member], models: Sequence[VehicleModel],
                 controllers: Optional[Sequence[Optional[Controller]]] = None,
                 water: Optional[WaterMap] = None):
        """models[i] (and controllers[i], None: flown over a link) of members[i].

        water: the water map (None: ground everywhere).
        """
        if len(models) != len(members):
            raise ValueError(f'{len(members)} members, {len(models)} models')
        ctl = list(controllers) if controllers is not None else [None] * len(members)
        if len(ctl) != len(members):
            raise ValueError(f'{len(members)} members, {len(ctl)} controllers')
        self.bodies = [Body(m, mod, c, info(m.kind).medium == AIR)
                       for m, mod, c in zip(members, models, ctl)]
        self.names = tuple(m.name for m in members)
        if len(set(self.names)) != len(self.names):
            raise ValueError(f'member names repeat: {self.names}')
        self.water = water
        self.samples: List[VehicleSample] = []
        self._touching: Set[Tuple[int, int]] = set()
        self.decks = Decks(self.names, [b.model for b in self.bodies],
                           {i: b.model.deck for i, b in enumerate(self.bodies)
                            if b.model.deck is not None},
                           [i for i, b in enumerate(self.bodies)
                            if info(b.member.kind).lands_on_decks])
        self._deck_pairs = set(self.decks.pairs())
        self.deck_events: List[DeckEvent] = []      # the last step's
        self._starts = self._deck_starts(members)
        self._check_landings(members)
        self.reset()

    def _deck_starts(self, members: Sequence[Member]) -> List[Tuple[int, int]]:
        """(vehicle, boat) of each member that starts on a boat's deck (start_on)."""
        out = []
        for m in members:
            if not m.start_on:
                continue
            d = self._deck_of(m.start_on, f'{m.name}: start_on')
            if m.index not in self.decks.riders:
                raise ValueError(f'{m.name}: start_on {m.start_on}: a {m.kind} does not '
                                 'rest on a deck')
            out.append((m.index, d))
        return out

    def _check_landings(self, members: Sequence[Member]) -> None:
        """Every land item's `deck` names a boat with a deck, flown to by a vehicle of decks."""
        for m in members:
            for k, it in enumerate(m.scenario.mission):
                if it.deck:
                    self._deck_of(it.deck, f'{m.name}: mission[{k}].deck')
                    if m.index not in self.decks.riders:
                        raise ValueError(f'{m.name}: mission[{k}].deck: a {m.kind} does '
                                         'not land on a deck')

    def _deck_of(self, name: str, where: str) -> int:
        if name not in self.names:
            raise ValueError(f'{where}: no vehicle {name!r} in the world '
                             f'({", ".join(self.names)})')
        d = self.names.index(name)
        if d not in self.decks.decks:
            raise ValueError(f'{where}: {name} has no deck (a boat type with deck:, '
                             'e.g. deck_usv)')
        return d

    @classmethod
    def build(cls, members: Sequence[Member], make_model: Callable[[Member], VehicleModel],
              make_controller: Callable[[Member, VehicleModel], Optional[Controller]],
              water: Optional[WaterMap] = None) -> 'World':
        """A world of members.

        Each model made by make_model, its in-process controller (or None) by
        make_controller: the kind registry's (kinds.entry).
        """
        models = [make_model(m) for m in members]
        return cls(members, models,
                   [make_controller(m, mod) for m, mod in zip(members, models)], water)

    # --- look-ups ------------------------------------------------------------------------
    def index(self, name: str) -> int:
        """The index of the member named name; KeyError if none."""
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(name) from None

    def model(self, name: str) -> VehicleModel:
        """The model of the member named name."""
        return self.bodies[self.index(name)].model

    def controller(self, name: str) -> Optional[Controller]:
        """The in-process controller of the member named name (None: over a link)."""
        return self.bodies[self.index(name)].controller

    def done(self) -> bool:
        """Every in-process controller's mission is complete (True if there are none)."""
        return all(b.controller.done for b in self.bodies if b.controller is not None)

    # --- time ----------------------------------------------------------------------------
    def reset(self) -> None:
        """Every model and controller back to the start; no contacts; samples at t = 0."""
        for b in self.bodies:
            b.model.reset()
            if b.controller is not None:
                b.controller.reset()
            b.due_ns = 0
        self._touching = set()
        self.samples = [b.model.sample(0) for b in self.bodies]
        self.decks.reset(self.samples)
        for r, d in self._starts:
            self.decks.place(r, d, self.samples, 0)
        for b in self.bodies:
            b.airborne = b.air and not b.model.on_surface()
        self.deck_events = []

    def resample(self, t_ns: int) -> None:
        """self.samples again, at t_ns [ns]: after a model's state was changed from outside."""
        self.samples = [b.model.sample(t_ns) for b in self.bodies]

    def step(self, dt_s: float, t_ns: int) -> List[Event]:
        """Controllers due at t_ns [ns], then every model dt_s [s], then contacts.

        Returns the events found (stamped t_ns + dt); self.samples are then the states at
        that time, every push applied. A model's error (ModelDiverged) propagates.
        """
        for b in self.bodies:
            c = b.controller
            if c is not None and t_ns >= b.due_ns:
                c.update(t_ns)
                period = int(round(NS_PER_S / c.rate_hz))
                b.due_ns += period
                if b.due_ns <= t_ns:        # a world step longer than its period
                    b.due_ns = t_ns + period
        vz = [float(s.v_enu[2]) for s in self.samples]
        for b in self.bodies:
            b.model.step(dt_s)
        t_end = t_ns + int(round(dt_s * NS_PER_S))
        samples = [b.model.sample(t_end) for b in self.bodies]
        self.deck_events = self.decks.step(samples, dt_s, t_end)
        for e in self.deck_events:
            if e.what == TOUCHDOWN:
                self.bodies[self.names.index(e.vehicle)].airborne = False
        events = self._surface(samples, vz, t_end)
        events += self._contacts(samples, t_end)
        self.samples = samples
        return events

    # --- contacts ------------------------------------------------------------------------
    def _surface(self, samples: List[VehicleSample], vz: List[float], t_ns: int
                 ) -> List[Event]:
        out = []
        for b, s, v in zip(self.bodies, samples, vz):
            if not b.air:
                continue
            on = b.model.on_surface()
            if b.airborne and on:
                p = tuple(float(x) for x in s.p_enu)
                point = (p[0], p[1], p[2])
                if self.water is not None and self.water(p[0], p[1]):
                    out.append(Event(t_ns, b.member.name, WATER, max(0.0, -v), point))
                else:
                    speed = ground_impact(True, True, v)
                    if speed is not None:
                        out.append(Event(t_ns, b.member.name, GROUND, speed, point))
            b.airborne = not on
        return out

    def _contacts(self, samples: List[VehicleSample], t_ns: int) -> List[Event]:
        bodies = self.bodies
        if len(bodies) < 2:
            return []
        pos = [tuple(float(x) for x in s.p_enu) for s in samples]
        found = contacts(pos, [tuple(float(x) for x in s.v_enu) for s in samples],
                         [b.model.mass_kg for b in bodies], [b.model.radius_m for b in bodies])
        out = []
        touching: Set[Tuple[int, int]] = set()
        pushed: Dict[int, bool] = {}
        for c in found:
            if (min(c.i, c.j), max(c.i, c.j)) in self._deck_pairs:
                continue        # they meet through the deck (sim_world.core.decks)
            bodies[c.i].model.push(c.dp_i, c.dv_i)
            bodies[c.j].model.push(c.dp_j, c.dv_j)
            pushed[c.i] = pushed[c.j] = True
            touching.add((c.i, c.j))
            if (c.i, c.j) not in self._touching:
                out.append(Event(t_ns, self.names[c.i], self.names[c.j], c.closing_speed,
                                 (float(c.point[0]), float(c.point[1]), float(c.point[2]))))
        for i, j in self._touching - touching:      # still within the margin: still touching
            reach = bodies[i].model.radius_m + bodies[j].model.radius_m + TOUCH_MARGIN_M
            if math.dist(pos[i], pos[j]) < reach:
                touching.add((i, j))
        self._touching = touching
        for i in pushed:
            samples[i] = bodies[i].model.sample(t_ns)
        return out
