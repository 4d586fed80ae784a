"""IMC control inputs are the vehicle's peers' only: a stranger neither drives nor changes it.

Issue 49: with the defaults, one DesiredHeading addressed to us from an unknown system switched
the control level to guidance, and from then on the bridge ignored DUNE's actuator commands
(DUNE's UDP transport sends them unaddressed, dst 0xFFFF: the header's dst says nothing of
who may command). Now control inputs (control_in.CONTROL_INPUTS) are taken from the addresses
of `peers` (DUNE's transport sends from the one socket it binds to its Local Port, 6002:
LSTS/dune src/Transports/UDP/Task.cpp, onResourceAcquisition and consume(); test/dune_peer.py
does the same) unless control_from says otherwise; from anywhere else each is one
rejected_peer, warned with its address, and changes nothing.
"""

import imcpy
import pytest

from imc_bridge.core.codec import Address, stamp
from sim_core.errors import ConfigError

from conftest import (
    DEADLINE_SCALE,
    free_ports,
    port_counts,
    probe_node,
    spin_until,
    wait_line,
)
from imc_graph_peer import CLIENT_SYS, SYS, ImcPeer, start_graph

DUNE = ('127.0.0.1', 6002)          # peers' default: DUNE's transport
STRANGER = ('127.0.0.1', 40123)


def imc_core(**cfg):
    from imc_bridge.core.bridge import ImcBridgeCore, ImcConfig
    from sim_core.scenario import load_scenario
    c = ImcConfig(timestamps='sim', announce_hosts='', **cfg)
    return ImcBridgeCore(c, load_scenario('default'), ('127.0.0.1', 6003))


def frame(msg, src=0x3F02, dst=0x3F01):
    return stamp(msg, Address(src, 0), 1.0, dst).serialize()


def heading(rad=1.0):
    m = imcpy.DesiredHeading()
    m.value = rad
    return m


def thruster(value=0.5):
    m = imcpy.SetThrusterActuation()
    m.id, m.value = 0, value
    return m


def leak_on():
    m = imcpy.LeakSimulation()
    m.op = imcpy.LeakSimulation.OperationEnum.ON
    return m


def gains_set():
    m = imcpy.DynamicsSimParam()
    m.op = imcpy.DynamicsSimParam.ActionOnTheVehicleSimulationParametersEnum.SET
    m.tas2acc_pgain, m.bank2p_pgain = 5.0, 5.0
    return m


def ua_data():
    m = imcpy.UASimulation()
    m.type = imcpy.UASimulation.TypeEnum.DATA
    m.speed, m.data = 80, b'hello'
    return m


def test_a_strangers_desired_heading_does_not_switch_the_level_and_dune_keeps_driving():
    """Issue 49's case, on the core: refused as peer, the level stays, DUNE's commands drive."""
    core = imc_core()
    act = core.on_datagram(frame(heading(), src=0x0042), STRANGER, 1.0, 0.0)
    assert act.reject[0] == 'peer', act.reject
    assert 'DesiredHeading from system 0x0042 at 127.0.0.1:40123' in act.reject[1]
    assert '127.0.0.1:6002 only (control_from)' in act.reject[1]
    assert core.arbiter.level == 'actuators' and act.autopilot == [] and act.effector == []
    assert core.counts['level_switches'] == 0 and core.counts['rx'] == 0
    # a stranger with DUNE's own system id is no better: the address decides
    assert core.on_datagram(frame(thruster(1.0), dst=0xFFFF), STRANGER, 1.0, 0.0).reject[0] \
        == 'peer'
    act = core.on_datagram(frame(thruster(0.5), dst=0xFFFF), DUNE, 1.0, 0.0)   # unaddressed
    assert act.reject is None and act.effector == [(0.5, None, None)]
    # and a DesiredHeading addressed to us by DUNE still switches, as it did
    act = core.on_datagram(frame(heading(0.5)), DUNE, 1.0, 0.0)
    assert act.reject is None and core.arbiter.level == 'guidance'
    assert act.autopilot == [(None, 0.5)]


@pytest.mark.parametrize('make', [heading, thruster, leak_on, gains_set, ua_data],
                         ids=lambda f: f.__name__)
def test_every_control_input_from_a_stranger_is_refused_and_changes_nothing(make):
    core = imc_core()
    act = core.on_datagram(frame(make()), STRANGER, 1.0, 0.0)
    assert act.reject[0] == 'peer' and act.gains is None and not act.leaks_changed
    assert act.effector == act.autopilot == [] and act.sends == []
    assert not core.leaks.active() and core.acoustic.due(1e9) == []


def test_a_stranger_may_still_ask_and_be_heard_but_not_command():
    """Queries and presence are not control: EntityList answered, Heartbeat makes a peer."""
    core = imc_core()
    q = imcpy.EntityList()
    q.op = imcpy.EntityList.OperationEnum.QUERY
    act = core.on_datagram(frame(q, src=0x0042), STRANGER, 1.0, 0.0)
    assert act.reject is None and act.sends and act.sends[0][1] == STRANGER
    act = core.on_datagram(frame(imcpy.Heartbeat(), src=0x0042), STRANGER, 1.0, 0.0)
    assert act.reject is None and STRANGER in core.dynamic
    # a dynamic peer gets our messages; it does not command
    assert core.on_datagram(frame(heading(), src=0x0042), STRANGER, 1.0, 0.0).reject[0] == 'peer'


def test_control_from_names_the_controllers_or_any():
    core = imc_core(control_from='any')
    assert core.on_datagram(frame(heading(), src=0x0042), STRANGER, 1.0, 0.0).reject is None
    assert core.arbiter.level == 'guidance'           # as before the fix, when asked for
    core = imc_core(control_from='localhost:40123, 127.0.0.1:6010')
    assert core.on_datagram(frame(thruster()), STRANGER, 1.0, 0.0).reject is None
    assert core.on_datagram(frame(thruster()), DUNE, 1.0, 0.0).reject[0] == 'peer'
    assert core.control_from() == '127.0.0.1:40123, 127.0.0.1:6010 only'
    core = imc_core(peers='')
    assert core.control_from().startswith('nobody') and any(
        'no system may drive this vehicle' in w for w in core.warnings)
    assert core.on_datagram(frame(thruster()), DUNE, 1.0, 0.0).reject[0] == 'peer'
    with pytest.raises(ConfigError, match='control_from'):
        imc_core(control_from='nonsense')


def test_a_stranger_on_the_imc_port_is_refused_and_counted_while_the_peer_drives(procs,
                                                                                  ros_context):
    """The bridge as launched: a stranger's addressed DesiredHeading, then the peer's commands.

    The stranger's input is one rejected_peer on /diagnostics, warned with its address; the
    control level stays actuators; the peer (at `peers`) switches it with its own.
    """
    from diagnostic_msgs.msg import DiagnosticArray
    port = free_ports(3)
    bridge = start_graph(procs, port, port + 1)
    peer, stranger = ImcPeer(port + 1, port), ImcPeer(port + 2, port)
    node, ex = probe_node(ros_context, 'imc_control_probe')
    diags = []
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 50)
    peer.wait_for('SimulatedState', 60.0 * DEADLINE_SCALE)
    stranger.send(heading())                    # addressed to us (SYS), from system CLIENT_SYS
    assert spin_until(node, ex, lambda: int(port_counts(diags, 'IMC link').get(
        'rejected_peer', 0)) == 1, 30.0), port_counts(diags, 'IMC link')
    c = port_counts(diags, 'IMC link')
    assert c['level_switches'] == '0' and c.get('control_level', 'actuators') == 'actuators', c
    peer.send(heading(), dst=SYS)               # the peer's: switches to guidance
    assert spin_until(node, ex, lambda: port_counts(diags, 'IMC link').get(
        'level_switches') == '1', 30.0), port_counts(diags, 'IMC link')
    assert wait_line(bridge.lines, 'IMC control level -> guidance', 30 * DEADLINE_SCALE,
                     (bridge,))
    out = procs.output(bridge)
    assert f'IMC input rejected from 127.0.0.1:{port + 2} (peer' in out, out[-3000:]
    assert f'DesiredHeading from system 0x{CLIENT_SYS:04X} at 127.0.0.1:{port + 2}' in out
    assert f'control from 127.0.0.1:{port + 1} only' in out
    assert 'Traceback' not in out
