#!/usr/bin/env python3
"""Coverage-guided fuzzing (atheris / libFuzzer) of the decoders behind every external input.

Targets, each allowed to refuse input only with its documented error:
  usv      USV UI JSON: decode -> parse_init (+ the swarm's layout check) / 22 applied / 26
           (ProtocolError)
  imc      IMC datagrams: codec.decode (ImcError)
  mavlink  MAVLink 2 datagrams: pymavlink parse -> the actuator mixer (ActuatorError) and
           the mission server (must not raise)
  config   scenario YAML text: yaml -> scenario_from_dict (ConfigError)
Any other exception, a hang or a crash is a finding: libFuzzer stops and prints the input.
Usage (after scripts/setup.sh):

    python scripts/fuzz_codecs.py usv -runs=100000        # libFuzzer flags after the target
"""

import json
from pathlib import Path
import sys
import tempfile

import atheris

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / 'aerosim' / 'config'

with atheris.instrument_imports(include=['usv_bridge', 'imc_bridge', 'mavlink_bridge',
                                         'sim_core', 'sim_dynamics']):
    import imcpy
    import yaml

    from imc_bridge.core import codec
    from mavlink_bridge.core.mav import mavlink, new_mav
    from mavlink_bridge.core.mission import MissionServer, items_from_scenario
    from mavlink_bridge.core.mixer import ActuatorError, Mixer
    from sim_core.errors import ConfigError
    from sim_core.scenario import load_scenario, scenario_from_dict
    from sim_core.validate import FieldError
    from sim_dynamics.core.usv_swarm import SwarmParams, SwarmSim, TypeTable
    from usv_bridge.core import protocol as P


def usv_target():
    """The USV UI input path of usv_bridge (pure part)."""
    types = TypeTable.from_yaml(CONFIG / 'usv_types.yaml')
    config = P.parse_init(json.loads((CONFIG / 'SimConfig.json').read_text()), types.boats,
                          types.obstacles, 1000)
    ids = config.boat_index()
    sim = SwarmSim(config, types, SwarmParams())

    def one(data):
        try:
            code, obj = P.decode(data)
            if code == 'init':
                cfg = P.parse_init(obj, types.boats, types.obstacles, 1000)
                SwarmSim(cfg, types, SwarmParams())          # the swarm's layout check
            elif code == P.CMD_CONTROL:
                sim.command(P.parse_command22(obj, config, ids))
            elif code == P.CMD_SESSION:
                P.parse_command26(obj)
        except FieldError:                                   # ProtocolError is one
            pass
    seeds = [(CONFIG / 'SimConfig.json').read_bytes(), b'[26, 2]',
             b'[22, 1, 0, 0, 0, 0, 3, 2.0, 90, 0, 0]',
             b'[22, 1, 0, 0, 0, 0, 1, 0, 0, 1, 2, 134.5, 10.5, 1]']
    return one, seeds


def imc_target():
    """codec.decode of every datagram the IMC bridge reads."""
    def one(data):
        try:
            codec.decode(data)
        except codec.ImcError:
            pass
    seeds = []
    for m in (imcpy.Heartbeat(), imcpy.DesiredSpeed(), imcpy.SetServoPosition(),
              imcpy.UASimulation(), imcpy.LeakSimulation(), imcpy.EntityList()):
        m.src, m.dst = 0x22, 0x3F01
        seeds.append(m.serialize())
    return one, seeds


def mavlink_target():
    """MAVLink parsing (pymavlink), then the bridge's actuator mixer and mission server."""
    mixer = Mixer((0, 1, 2, 3))
    sim = new_mav(51, 1)
    server = MissionServer(items_from_scenario(load_scenario('default').mission))

    def one(data):
        rx = new_mav(51, 1)
        for m in rx.parse_buffer(data) or []:
            t = m.get_type()
            if t == 'HIL_ACTUATOR_CONTROLS':
                try:
                    mixer.throttles(m.controls)
                except ActuatorError:
                    pass
            elif t in ('MISSION_REQUEST_INT', 'MISSION_REQUEST'):
                server.start(sim, m.get_srcSystem(), m.get_srcComponent(), 0.0)
                server.on_request(sim, m, 0.0)
            elif t == 'MISSION_ACK':
                server.on_ack(m)
            elif t == 'MISSION_REQUEST_LIST':
                server.on_request_list(sim, m, 0.0)
            server.poll(10.0)
    fc = new_mav(1, 1)
    seeds = [m.pack(fc) for m in (
        fc.hil_actuator_controls_encode(4000, [0.5] * 16, 129, 1),
        fc.mission_request_int_encode(51, 1, 0, 0), fc.mission_ack_encode(51, 1, 0, 0),
        fc.mission_request_list_encode(51, 1, 0),
        fc.heartbeat_encode(mavlink.MAV_TYPE_QUADROTOR, mavlink.MAV_AUTOPILOT_PX4, 0, 0, 3))]
    return one, seeds


def config_target():
    """Scenario YAML text -> a validated Scenario."""
    def one(data):
        try:
            d = yaml.safe_load(data.decode('utf-8'))
        except (UnicodeDecodeError, yaml.YAMLError, RecursionError):
            return
        try:
            scenario_from_dict(d, base_dir=CONFIG / 'scenarios')
        except ConfigError:
            pass
    seeds = [p.read_bytes() for p in (CONFIG / 'scenarios').glob('*.yaml')]
    return one, seeds


TARGETS = {'usv': usv_target, 'imc': imc_target, 'mavlink': mavlink_target,
           'config': config_target}


def main():
    """Fuzz one target with libFuzzer's arguments."""
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f'usage: fuzz_codecs.py {{{"|".join(TARGETS)}}} [libFuzzer flags]')
    one, seeds = TARGETS[sys.argv[1]]()
    corpus = Path(tempfile.mkdtemp(prefix=f'aerosim_fuzz_{sys.argv[1]}_'))
    for k, s in enumerate(seeds):
        (corpus / f'seed{k}').write_bytes(s)
    atheris.Setup([sys.argv[0]] + sys.argv[2:] + [str(corpus)], one)
    atheris.Fuzz()


if __name__ == '__main__':
    main()
