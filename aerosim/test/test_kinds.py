"""The vehicle-kind registry: every kind provides every part, and a kind that misses one fails.

sim_world.core.kinds.REGISTRY holds one KindEntry per VehicleKind (sim_core.kinds): its
parameter loader and folder, model (the VehicleModel contract), mixer (if a controller flies
it over MAVLink), view, judge, and a way to run each of its controllers. ``missing`` builds
each part from the kind's example scenario and names what is absent or broken. This is the
check docs/extending.md points a contributor at.
"""

from dataclasses import replace

import pytest
from sim_world.core.kinds import (
    IN_PROCESS,
    REGISTRY,
    ControllerWay,
    View,
    entry,
    missing,
    require_kind,
)

from sim_core.errors import ConfigError
from sim_core.kinds import KINDS, VehicleKind
from sim_core.scenario import load_scenario


def test_every_kind_has_facts_and_a_registry_entry():
    assert set(REGISTRY) == set(VehicleKind) == set(KINDS)


@pytest.mark.parametrize('kind', list(VehicleKind), ids=lambda k: k.value)
def test_every_registered_kind_provides_every_part(kind):
    assert missing(REGISTRY[kind]) == []


class NoStep:
    """A model class without step(): not a VehicleModel."""

    def __init__(self, model):
        self._m = model

    @classmethod
    def from_member(cls, member, environment=None):
        from sim_dynamics.core.members import QuadModel
        return cls(QuadModel.from_member(member))

    mass_kg = property(lambda self: self._m.mass_kg)
    radius_m = property(lambda self: self._m.radius_m)

    def reset(self):
        self._m.reset()

    def sample(self, t_ns):
        return self._m.sample(t_ns)

    def push(self, dp, dv):
        self._m.push(dp, dv)

    def on_surface(self):
        return self._m.on_surface()


@pytest.mark.parametrize('change, named', [
    ({'judge': None}, 'judge:'),
    ({'judge': lambda scenario: 1 / 0}, 'judge: not built'),
    ({'world_judge': None}, 'world_judge:'),
    ({'world_judge': lambda member: object()}, 'world_judge: marker (VehicleJudge)'),
    ({'mixer': None}, 'mixer:'),
    ({'view': None}, 'view:'),
    ({'view': View(lambda params, ns: (lambda p, q: []), 0.6)}, 'view: the body draws no'),
    ({'model': object}, 'model: a VehicleModel class'),
    ({'model': NoStep}, 'model: step()'),
    ({'load_params': None}, 'load_params:'),
    ({'node': ''}, 'node:'),
    ({'example': 'circuit'}, "example: scenario 'circuit'"),
    ({'controllers': {}}, "controllers: 'builtin' has no way to run"),
])
def test_a_kind_that_misses_a_part_is_named(change, named):
    broken = replace(REGISTRY[VehicleKind.MULTIROTOR], **change)
    got = missing(broken)
    assert any(x.startswith(named) for x in got), got


def test_controllers_must_fit_the_kinds_facts():
    e = REGISTRY[VehicleKind.BOAT]
    bad = dict(e.controllers, waypoint=ControllerWay(IN_PROCESS, 'BoatWaypoints'),
               autopilot=ControllerWay(IN_PROCESS, 'x', make=lambda m, model: None))
    got = missing(replace(e, controllers=bad))
    assert "controllers: 'waypoint' runs in process but has no make(member, model)" in got
    assert "controllers: 'autopilot' is not a controller of sim_core.kinds" in got


def test_lookups_by_name_and_the_single_kind_guard():
    assert entry('plane') is REGISTRY[VehicleKind.PLANE]
    with pytest.raises(ConfigError, match='kind'):
        entry('submarine')
    require_kind(load_scenario('circuit'), VehicleKind.PLANE, 'plane_node')
    with pytest.raises(ConfigError, match=r'a plane; dynamics_node is for multirotors only '
                       r'\(a plane: plane_node\)'):
        require_kind(load_scenario('circuit'), VehicleKind.MULTIROTOR, 'dynamics_node')
    with pytest.raises(ConfigError, match='among others.*sim_world'):
        require_kind(load_scenario('harbour_ops'), VehicleKind.BOAT, 'usv_node')
