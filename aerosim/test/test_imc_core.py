"""IMC bridge core: acoustic link, leaks, state mapping and the presence messages (no ROS)."""

import math

import imcpy
import numpy as np
import pytest
from transforms3d import euler as te

from imc_bridge.core.acoustic import DATA, PING, PING_REPLY, AcousticLink, AcousticParams
from imc_bridge.core.codec import Address, announce, decode, entity_list_report, estimated_state
from imc_bridge.core.leaks import OFF, ON, LeakState
from imc_bridge.core.state import imc_kinematics, stream_velocity_ned
from sim_core.errors import ConfigError
from sim_core.frames import euler_ned_to_quat, q_ned_frd_to_enu_flu

ADDR = Address(0x3F01, 1)


# --- acoustic link ------------------------------------------------------------------------------
def test_data_arrives_after_travel_plus_transmission_time():
    link = AcousticLink(AcousticParams(sound_speed_mps=1500.0, max_range_m=2000.0))
    assert link.transmit(10.0, DATA, 0x22, 0x3F01, 80, b'0123456789', 750.0) == 'queued'
    expected = 10.0 + 750.0 / 1500.0 + 8 * 10 / 80           # 0.5 s travel + 1.0 s on the air
    assert link.due(expected - 1e-6) == []
    (d,) = link.due(expected)
    assert d.kind == DATA and d.data == b'0123456789' and (d.src, d.dst) == (0x22, 0x3F01)
    assert d.delay_s == pytest.approx(1.5) and d.range_m == 750.0


def test_ping_is_answered_after_the_two_way_travel_time():
    link = AcousticLink(AcousticParams(sound_speed_mps=1480.0))
    link.transmit(0.0, PING, 0x22, 0x3F01, 0, b'', 370.0, reply_to='sender')
    (d,) = link.due(1.0)
    assert d.kind == PING_REPLY and (d.src, d.dst) == (0x3F01, 0x22)     # answered by dst
    assert d.t_s == pytest.approx(2 * 370.0 / 1480.0) and d.reply_to == 'sender'


def test_range_limit_loss_rate_and_order():
    link = AcousticLink(AcousticParams(max_range_m=500.0))
    assert link.transmit(0.0, DATA, 1, 2, 100, b'x', 500.1) == 'out of range'
    assert len(link) == 0 and link.out_of_range == 1
    lossy = AcousticLink(AcousticParams(loss_probability=0.3, seed=7))
    results = [lossy.transmit(0.0, DATA, 1, 2, 1000, b'x', 10.0) for _ in range(4000)]
    assert results.count('lost') / 4000 == pytest.approx(0.3, abs=0.03)
    # two legs for a ping: lost with 1 - 0.7^2
    pings = [lossy.transmit(0.0, PING, 1, 2, 0, b'', 10.0) for _ in range(4000)]
    assert pings.count('lost') / 4000 == pytest.approx(1 - 0.7 ** 2, abs=0.03)
    again = AcousticLink(AcousticParams(loss_probability=0.3, seed=7))
    assert [again.transmit(0.0, DATA, 1, 2, 1000, b'x', 10.0) for _ in range(4000)] == results
    ordered = AcousticLink()
    for r in (900.0, 100.0, 500.0):
        ordered.transmit(0.0, DATA, 1, 2, 10_000, b'', r)
    assert [d.range_m for d in ordered.due(10.0)] == [100.0, 500.0, 900.0]


def test_acoustic_loss_grows_with_range_by_the_sonar_equation():
    """SL - TL(R) - NL against DT: TL = 20 log10 R + Thorp's absorption (6.1 dB/km at 25 kHz)."""
    from imc_bridge.core.acoustic import arrival_probability, thorp_db_per_km
    assert thorp_db_per_km(25.0) == pytest.approx(6.1, abs=0.05)      # Thorp, 25 kHz
    p = AcousticParams(max_range_m=1e5)
    # half the frames where the margin is 0: 185 - 20 log10 R - 6.1 R/1000 - 90 - 10 = 0
    r_half = next(r for r in range(1000, 6000) if arrival_probability(p, r) < 0.5)
    tl = 20 * math.log10(r_half) + thorp_db_per_km(25.0) * r_half / 1000
    assert tl == pytest.approx(85.0, abs=0.1) and 2500 < r_half < 2800
    link = AcousticLink(AcousticParams(max_range_m=1e5, seed=3))
    rates = []
    for r in (1000.0, r_half, 4000.0):
        out = [link.transmit(0.0, DATA, 1, 2, 1000, b'x', r) for _ in range(2000)]
        rates.append(out.count('lost') / 2000)
    assert rates[0] < 0.01 and rates[1] == pytest.approx(0.5, abs=0.05) and rates[2] > 0.99
    # a quieter sea (NL 20 dB lower) carries 4 km
    quiet = AcousticParams(max_range_m=1e5, noise_level_db=70.0)
    assert arrival_probability(quiet, 4000.0) > 0.98
    with pytest.raises(ConfigError, match='frequency_khz'):
        AcousticParams(frequency_khz=0.0)


@pytest.mark.parametrize('args', [(PING_REPLY, 100, 10.0), (7, 100, 10.0), (DATA, 0, 10.0),
                                  (DATA, 100, float('nan'))])
def test_what_the_channel_cannot_carry_is_refused(args):
    link = AcousticLink()
    with pytest.raises(ValueError):
        link.transmit(0.0, args[0], 1, 2, args[1], b'x', args[2])
    assert len(link) == 0 and link.sent == 0


@pytest.mark.parametrize('field,value', [('sound_speed_mps', 340.0), ('max_range_m', 0.0),
                                         ('loss_probability', 1.5)])
def test_bad_acoustic_parameters_name_the_field(field, value):
    with pytest.raises(ConfigError, match=field):
        AcousticParams(**{field: value})


# --- leaks --------------------------------------------------------------------------------------
def test_leaks_on_off_per_entity_and_all():
    leaks = LeakState(['Fwd', 'Aft', 'Mid'])
    assert leaks.apply(ON, 'Aft, Fwd') == ('Aft', 'Fwd')
    assert leaks.active() == ('Fwd', 'Aft')                  # configuration order
    leaks.apply(OFF, 'Fwd')
    assert leaks.active() == ('Aft',)
    leaks.apply(ON, '')                                      # empty list = all
    assert leaks.active() == ('Fwd', 'Aft', 'Mid')
    leaks.apply(OFF, '')
    assert leaks.active() == ()


def test_unknown_leak_entity_or_op_changes_nothing():
    leaks = LeakState(['Fwd', 'Aft'])
    leaks.apply(ON, 'Fwd')
    with pytest.raises(ValueError, match='Bilge'):
        leaks.apply(OFF, 'Fwd,Bilge')
    with pytest.raises(ValueError, match='op'):
        leaks.apply(2, 'Fwd')
    assert leaks.active() == ('Fwd',)
    with pytest.raises(ValueError):
        LeakState(['a', 'a'])
    with pytest.raises(ValueError):
        LeakState(['a,b'])


# --- state mapping ------------------------------------------------------------------------------
def test_kinematics_of_a_boat_heading_east_in_a_current():
    # heading 90 deg (east), 2 m/s through the water, a 0.5 m/s current to the north
    heading = math.pi / 2
    q = q_ned_frd_to_enu_flu(euler_ned_to_quat(0.0, 0.0, heading))
    stream = stream_velocity_ned((0.0, 0.5, 0.0))           # ENU north -> NED x
    assert stream == (0.5, 0.0, 0.0)
    v_enu = (2.0, 0.5, 0.0)                                  # ground = water + current
    k = imc_kinematics((30.0, 40.0, 1.0), v_enu, q, (0.0, 0.0, 0.1), stream)
    assert k.ned == pytest.approx((40.0, 30.0, -1.0))
    assert k.euler == pytest.approx((0.0, 0.0, heading))
    assert k.uvw_water == pytest.approx((2.0, 0.0, 0.0), abs=1e-12)      # straight ahead
    assert k.uvw_ground == pytest.approx((2.0, -0.5, 0.0), abs=1e-12)    # north = port side
    assert k.v_ned == pytest.approx((0.5, 2.0, 0.0))
    assert k.pqr == pytest.approx((0.0, 0.0, -0.1))                     # FLU z up -> FRD z down
    # DUNE's DVL simulator: ground velocity = u/v/w + the stream rotated into the body
    r_bn = te.euler2mat(heading, 0.0, 0.0, 'rzyx').T
    assert np.add(k.uvw_water, r_bn @ np.array(stream)) == pytest.approx(k.uvw_ground)


def test_estimated_state_announce_and_entity_list_parse_back():
    q = q_ned_frd_to_enu_flu(euler_ned_to_quat(0.05, -0.1, 3.0))
    k = imc_kinematics((1.0, 2.0, -3.0), (0.1, 0.2, 0.0), q, (0.0, 0.0, 0.0))
    origin = (math.radians(41.18), math.radians(-8.7), 0.0)
    m = decode(estimated_state(ADDR, 5.25, origin, k, depth=3.0).serialize())
    assert m.msg_name == 'EstimatedState' and (m.src, m.src_ent) == (0x3F01, 1)
    assert m.timestamp == 5.25 and m.lat == origin[0] and m.lon == origin[1]
    assert (m.x, m.y, m.z) == pytest.approx((2.0, 1.0, 3.0))
    assert (m.phi, m.theta, m.psi) == pytest.approx((0.05, -0.1, 3.0), abs=1e-6)
    assert (m.vx, m.vy, m.vz) == pytest.approx((0.2, 0.1, 0.0), abs=1e-6)
    assert m.depth == 3.0 and m.alt == -1.0
    a = decode(announce(ADDR, 1.0, 'aerosim-usv', 3, origin,
                        ['imc+udp://127.0.0.1:6003/', 'x://y']).serialize())
    assert a.sys_name == 'aerosim-usv' and a.sys_type == imcpy.SystemType.USV
    assert a.services == 'imc+udp://127.0.0.1:6003/;x://y' and a.dst == 0xFFFF
    e = decode(entity_list_report(ADDR, 1.0, [('Simulation Engine', 1), ('Leak Aft', 2)],
                                  dst=0x22).serialize())
    assert e.op == imcpy.EntityList.OperationEnum.REPORT
    assert e.list == 'Simulation Engine=1;Leak Aft=2' and e.dst == 0x22


# --- control level, signs, timestamps, discovery ------------------------------------------------
def test_one_control_level_at_a_time():
    from imc_bridge.core.control import ACTUATORS, GUIDANCE, ControlArbiter
    arb = ControlArbiter(ACTUATORS, 0x3F01)
    assert arb.decide(ACTUATORS, 0xFFFF) == (True, False)      # DUNE's rudder commands
    assert arb.decide(GUIDANCE, 0xFFFF) == (False, False)      # its Desired* telemetry copies
    assert arb.decide(GUIDANCE, 0xFFF0) == (False, False)      # IMC broadcast too
    assert arb.decide(GUIDANCE, 0x3F01) == (True, True)        # addressed to us: switch
    assert arb.level == GUIDANCE and arb.switches == 1
    assert arb.decide(GUIDANCE, 0xFFFF) == (True, False)
    assert arb.decide(ACTUATORS, 0xFFFF) == (False, False)
    assert arb.decide(ACTUATORS, 0x3F01) == (True, True) and arb.level == ACTUATORS
    with pytest.raises(ValueError, match='control_level'):
        ControlArbiter('both', 1)


def test_rudder_and_thruster_senses():
    from imc_bridge.core.control import rudder_aerosim, throttle_aerosim
    from sim_dynamics.core.usv import rudder_aerosim_starboard
    # DUNE: rudder = -PID(psi_d - psi): to turn to starboard (psi_d > psi) it commands a
    # negative rudder. Through AeroSim's sign into the model (positive = bow to starboard) a
    # negative IMC value must come out positive.
    dune_cmd_to_turn_starboard = -0.2
    assert rudder_aerosim_starboard(rudder_aerosim(dune_cmd_to_turn_starboard)) > 0.0
    assert rudder_aerosim(0.2, 'starboard') == -0.2
    assert throttle_aerosim(0.5) == 0.5 and throttle_aerosim(0.5, 'astern') == -0.5


def test_timestamps_utc_when_sent_sim_utc_and_sim():
    from imc_bridge.core.control import Stamper
    wall = [1.7e9]
    utc, sim_utc, sim = (Stamper(m, lambda: wall[0]) for m in ('utc', 'sim_utc', 'sim'))
    wall[0] += 100.0                    # 100 s of wall time while the sim ran 97.75 s
    assert utc(97.75) == 1.7e9 + 100.0 and sim_utc(97.75) == 1.7e9 + 97.75
    assert sim(97.75) == 97.75
    with pytest.raises(ValueError, match='timestamps'):
        Stamper('gps')


def test_discovery_ports_and_services():
    from imc_bridge.core.discovery import parse_ports, service_uris
    assert parse_ports('30100-30104') == (30100, 30101, 30102, 30103, 30104)
    assert parse_ports('5000, 5002-5003,5000') == (5000, 5002, 5003)
    for bad in ('', 'x', '30104-30100', '0-3', '1-1000'):
        with pytest.raises(ValueError, match='discovery_ports'):
            parse_ports(bad)
    assert service_uris('127.0.0.1', 6003) == ['imc+udp://127.0.0.1:6003/']
    # bound to every address: every interface address is a service (DUNE activates a node
    # whose datagrams come from one of them), loopback first
    anyw = service_uris('0.0.0.0', 6003)
    assert anyw[0] == 'imc+udp://127.0.0.1:6003/' and all(u.endswith(':6003/') for u in anyw)


def test_entity_state_of_a_leak_entity():
    from imc_bridge.core.codec import entity_state
    m = decode(entity_state(ADDR, 12.5, 3, True, 'leak detected').serialize())
    assert m.msg_name == 'EntityState' and (m.src, m.src_ent, m.dst) == (0x3F01, 3, 0xFFFF)
    assert m.state == imcpy.EntityState.StateEnum.FAILURE and m.description == 'leak detected'


def test_shipped_dune_configuration_matches_the_sim_imc_defaults():
    """config/dune/aerosim-usv.ini agrees with sim_imc's defaults.

    DUNE's GPS simulator places the boat at its Initial Position + our x/y, so that must be
    sim_imc's scenario origin; the addresses and ids must be the bridge's defaults, DUNE's
    navigation rate our SimulatedState rate.
    """
    import configparser
    from pathlib import Path

    import yaml

    from sim_core.scenario import load_scenario
    root = Path(__file__).resolve().parents[1]
    ini = configparser.ConfigParser(strict=False, inline_comment_prefixes=('#',))
    ini.optionxform = str
    text = (root / 'config/dune/aerosim-usv.ini').read_text()
    ini.read_string('\n'.join(line for line in text.splitlines()
                              if not line.startswith('[Require')))
    bridge = yaml.safe_load((root / 'config/imc_bridge.yaml').read_text())
    bridge = bridge['/**/imc_bridge']['ros__parameters']
    o = load_scenario('harbour').origin
    lat, lon = (float(v) for v in ini['Simulators.GPS']['Initial Position'].split(','))
    assert (lat, lon) == (pytest.approx(o.lat_deg, abs=1e-7), pytest.approx(o.lon_deg,
                                                                              abs=1e-7))
    assert int(ini['IMC Addresses']['aerosim-usv'], 16) == bridge['system_id']
    assert bridge['system_name'] == 'aerosim-usv'
    assert ini['Simulators.Motor/Port']['Thruster Id'].strip() == str(bridge['thruster_id'])
    assert bridge['rudder_positive'] == 'port' and bridge['control_level'] == 'actuators'
    assert ini['Simulators.VSIM']['Enabled'].strip() == 'Never'
    # DUNE's navigation (its GPS simulator) at our SimulatedState rate, and its rudder rate
    # limiter passing every heading output (one per navigation update)
    from dune_peer import DuneConfig
    dune = DuneConfig()
    assert dune.gps_hz == bridge['simulated_state_rate_hz']
    assert dune.rate_limits()['SetServoPosition'] < 1.0 / dune.gps_hz


# --- ImcBridgeCore: the bridge node's decisions, without ROS ----------------------------------
def imc_core(**cfg):
    from imc_bridge.core.bridge import ImcBridgeCore, ImcConfig
    from sim_core.scenario import load_scenario
    c = ImcConfig(timestamps='sim', announce_hosts='', **cfg)
    return ImcBridgeCore(c, load_scenario('default'), ('127.0.0.1', 6003))


def imc_bytes(msg, src=0x3F02, dst=0x3F01):
    from imc_bridge.core.codec import stamp
    return stamp(msg, Address(src, 0), 1.0, dst).serialize()


def test_imc_core_drives_the_actuators_and_refuses_with_the_kind():
    core = imc_core()
    peer = ('127.0.0.1', 6002)
    thr = imcpy.SetThrusterActuation()
    thr.id, thr.value = 0, 0.5
    act = core.on_datagram(imc_bytes(thr), peer, 1.0, 0.0)
    assert act.reject is None and act.effector == [(0.5, None, None)] and core.counts['rx'] == 1
    thr.id = 3
    assert core.on_datagram(imc_bytes(thr), peer, 1.0, 0.0).reject[0] == 'value'
    assert core.on_datagram(imc_bytes(thr, dst=0x1234), peer, 1.0, 0.0).reject[0] == \
        'not_for_us'
    assert core.on_datagram(b'\xfe\x54garbage', peer, 1.0, 0.0).reject is not None
    # a broadcast of the other level (DUNE's telemetry of its Desired*) drives nothing
    speed = imcpy.DesiredSpeed()
    speed.value, speed.speed_units = 2.0, imcpy.SpeedUnits.METERS_PS
    act = core.on_datagram(imc_bytes(speed, dst=0xFFFF), peer, 1.0, 0.0)
    assert act.reject is None and act.autopilot == [] and core.counts['ignored_guidance'] == 1
    assert act.limited and act.limited[0][1] == 'ignored_guidance'
    # addressed to us it switches the level: actuators at 0, then the speed hold
    act = core.on_datagram(imc_bytes(speed), peer, 1.0, 0.0)
    assert act.effector == [(0.0, 0.0, None)] and act.autopilot == [(2.0, None)]
    assert core.arbiter.level == 'guidance' and core.counts['level_switches'] == 1


def test_an_auvs_bridge_moves_each_fin_by_its_servo_id_from_duness_servo_positions():
    """DUNE's LAUV: Simulators.Servos' ServoPosition ids 0-3 drive the fins.

    (Where its servos moved the fins, in VSIM's sense; values exact in IMC's fp32.) The
    allocator's SetServoPosition (one of four through the LAUV ini's rate limiter per second)
    is ignored unless fin_source says so.
    """
    from sim_core.kinds import vehicle_file
    lauv = str(vehicle_file('auv', 'lauv'))
    core = imc_core(vehicle_file=lauv)
    peer = ('127.0.0.1', 6002)                  # DUNE's transport: peers (control_from)
    pos = imcpy.ServoPosition()
    pos.id, pos.value = 1, 0.125                              # port elevator
    act = core.on_datagram(imc_bytes(pos, dst=0xFFFF), peer, 1.0, 0.0)
    assert act.reject is None and act.effector == [(None, (0.0, 0.0), (0.125, 0.0))]
    pos.id, pos.value = 3, -0.25                             # upper rudder
    act = core.on_datagram(imc_bytes(pos, dst=0xFFFF), peer, 1.0, 0.0)
    assert act.effector == [(None, (0.0, -0.25), (0.125, 0.0))]
    cmd = imcpy.SetServoPosition()
    cmd.id, cmd.value = 2, 0.375
    n = core.counts['ignored']
    act = core.on_datagram(imc_bytes(cmd, dst=0xFFFF), peer, 1.0, 0.0)
    assert act.effector == [] and core.counts['ignored'] == n + 1
    pos.id = 4                                              # no such fin: refused, nothing moves
    act = core.on_datagram(imc_bytes(pos), peer, 1.0, 0.0)
    assert act.reject[0] == 'value' and 'servos 0, 1, 2, 3' in act.reject[1]
    pos.id, pos.value = 0, float('nan')
    assert core.on_datagram(imc_bytes(pos), peer, 1.0, 0.0).reject[0] == 'value'
    assert core.fin_angles == [0.0, 0.125, 0.0, -0.25]
    # DUNE's plan traffic with another system, relayed to us: counted, not refused
    relayed = core.counts['relayed']
    for msg in (imcpy.PlanControl(), imcpy.TransmissionRequest()):
        act = core.on_datagram(imc_bytes(msg, dst=0x3F70), peer, 1.0, 0.0)
        assert act.reject is None
    assert core.counts['relayed'] == relayed + 2
    # a control level switch puts the thruster and every fin at 0
    speed = imcpy.DesiredSpeed()
    speed.value, speed.speed_units = 1.0, imcpy.SpeedUnits.METERS_PS
    act = core.on_datagram(imc_bytes(speed), peer, 1.0, 0.0)
    assert act.effector == [(0.0, (0.0, 0.0), (0.0, 0.0))]
    # the allocator's commands when asked to
    other = imc_core(vehicle_file=lauv, fin_source='SetServoPosition')
    act = other.on_datagram(imc_bytes(cmd), peer, 1.0, 0.0)
    assert act.effector == [(None, (0.0, 0.0), (0.0, 0.375))]
    with pytest.raises(ConfigError, match='fin_source'):
        imc_core(vehicle_file=lauv, fin_source='Servos')


def test_imc_core_leak_simulation_replies_and_reports_the_entities():
    core = imc_core()
    leak = imcpy.LeakSimulation()
    leak.op, leak.entities = imcpy.LeakSimulation.OperationEnum.ON, ''
    act = core.on_datagram(imc_bytes(leak), ('127.0.0.1', 6002), 1.0, 0.0)
    assert act.reject is None and act.leaks_changed
    assert all(core.leaks.leaking.values())
    replies = [(m, to) for m, to in act.sends if to is not None]
    assert len(replies) == 1 and replies[0][0].dst == 0x3F02
    states = [m for m, to in act.sends if to is None]
    assert len(states) == len(core.leaks.entities)
    assert all(m.state == imcpy.EntityState.StateEnum.FAILURE for m in states)


def test_our_own_announce_is_no_conflict_from_any_of_our_addresses_even_0_0_0_0():
    """A multicast route on lo with no source address echoes our Announce from 0.0.0.0."""
    import imcpy
    core = imc_core()
    a = imcpy.Announce()
    a.sys_name = core.cfg.system_name
    a.services = ''
    ours = imc_bytes(a, src=core.system_id, dst=0xFFFF)
    for ip in ('127.0.0.1', '0.0.0.0'):
        assert not core.on_discovery(ours, (ip, 6003), 1.0).limited, ip
    assert core.counts['id_conflicts'] == 0
    other = core.on_discovery(ours, ('127.0.0.1', 6010), 2.0)     # another port: another
    assert [line[0] for line in other.limited] == ['error'] and core.counts['id_conflicts'] == 1
