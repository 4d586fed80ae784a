"""The bridges' configuration errors, without ROS: each names the parameter and what it wants.

A node reads its parameters into the core's config dataclass (sim_core.config.build, as
sim_ros.params.read_config does) and hands it to the core, which refuses a bad value with a
ConfigError; the node then ends with exit code 2 and 'configuration error: <the message>'
(shown once with a real node in test_imc_graph and test_usv_swarm_graph). Here the same
values go straight to the config and the core: the messages are the nodes' to the letter.
"""

import pytest

from imc_bridge.core.bridge import PARAMETERS as IMC_PARAMETERS
from imc_bridge.core.bridge import ImcBridgeCore, ImcConfig
from sim_core.config import build
from sim_core.errors import ConfigError
from sim_core.link import parse_endpoint
from sim_core.scenario import load_scenario
from sim_dynamics.core.swarm_config import load_swarm_config
from sim_dynamics.core.usv_swarm import TypeTable
from usv_bridge.core.pipeline import PARAMETERS as UI_PARAMETERS
from usv_bridge.core.pipeline import UiConfig

LOCAL = ('127.0.0.1', 6003)      # the bridge's bound address (the node's socket)


def imc_error(**values) -> str:
    """The ConfigError text of an IMC bridge given these parameter values (as ROS types)."""
    with pytest.raises(ConfigError) as err:
        cfg = build(ImcConfig, IMC_PARAMETERS, {'scenario_file': 'harbour', **values})
        ImcBridgeCore(cfg, load_scenario(cfg.scenario_file), LOCAL)
    return str(err.value)


@pytest.mark.parametrize('param,value,message', [
    ('peers', '127.0.0.1:6002,oops', 'peers: expected host:port'),
    ('system_type', 'submarine', 'system_type: one of'),
    ('timestamps', 'gps', "timestamps: one of utc, sim_utc, sim, got 'gps'"),
    ('rudder_positive', 'left', "rudder_positive: one of port, starboard, got 'left'"),
    ('control_level', 'both', "control_level: one of actuators, guidance, got 'both'"),
    ('discovery_ports', '30100-99999', 'discovery_ports:'),
    ('announce_hosts', 'a b', 'announce_hosts:'),
    ('topside_position_enu', [0.0, 1.0], 'topside_position_enu: 3 finite numbers'),
    ('leak_entities', ['Aft', 'Aft'], 'must be unique'),
])
def test_imc_bridge_bad_configuration_is_a_clear_error(param, value, message):
    assert message in imc_error(**{param: value})


def test_imc_bridge_bad_bind_is_a_clear_error():
    """The node opens its socket on bind through parse_endpoint (sim_ros.port_node)."""
    with pytest.raises(ValueError, match='bind: expected host:port'):
        parse_endpoint('nonsense', 'bind')


def test_imc_bridge_default_configuration_is_accepted():
    """The checks above refuse the bad value, not the rest: the defaults build a core."""
    cfg = build(ImcConfig, IMC_PARAMETERS, {'scenario_file': 'harbour'})
    assert ImcBridgeCore(cfg, load_scenario('harbour'), LOCAL).system_id == 0x3F01


def test_swarm_files_that_do_not_exist_are_a_clear_error():
    """sim_config (usv_bridge and usv_swarm_node) and types_file (both) name the file."""
    cfg = build(UiConfig, UI_PARAMETERS, {'sim_config': 'no_such.json'})
    types = TypeTable.load(cfg.types_file)
    with pytest.raises(ConfigError, match="file 'no_such.json' not found"):
        load_swarm_config(cfg.sim_config, types.boats, types.obstacles, cfg.max_boats)
    cfg = build(UiConfig, UI_PARAMETERS, {'types_file': 'no_such.yaml'})
    with pytest.raises(ConfigError, match="file 'no_such.yaml' not found"):
        TypeTable.load(cfg.types_file)
