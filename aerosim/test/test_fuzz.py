"""Fuzz smoke run: malformed input on every bridge's UDP port and in the config files.

Each port gets a few thousand inputs that are malformed by construction (fuzzing.py), sent
over a real socket to the running node while its simulation is paused. Asserted: the node
stays up; every input is one reject (the bridge's /diagnostics total equals what was sent,
less what the kernel dropped, read from /proc/net/udp), and the kinds that map one to one
(values, addressing) are exact; nothing reached the ROS side (no command published, the sim
did not step, latched state unchanged); the warnings are rate-limited; no traceback. The long
run (100,000 per port) is `scripts/fuzz_ports.py paused`; its figures are in docs/hardening.md.
"""

import json
import math
import os
from pathlib import Path
import random
import re
import socket
import subprocess
import sys
import time

from diagnostic_msgs.msg import DiagnosticArray
import pytest
from std_msgs.msg import UInt8

from aerosim_msgs.msg import (
    AircraftEffectorCommand,
    AutopilotCommand,
    BoatCommand,
    JsonData,
    LeakState,
    SimStatus,
)
from sim_core.errors import ConfigError
from sim_ros import qos

from conftest import REPO_DIR, free_ports, port_counts, probe_node, spin_for, spin_until
from fuzzing import ImcInputs, MavlinkInputs, UsvInputs, blast, mutated_text, wait_drained
from graph_start import start

N = int(os.environ.get('AEROSIM_FUZZ_N', 3000))              # inputs per port
FILE_N = int(os.environ.get('AEROSIM_FUZZ_FILE_N', 300))     # mutants per config file
WARN_PERIOD_S = 0.5
CONFIG = Path(__file__).resolve().parent.parent / 'config'


def fuzz_port(procs, ros_context, node_proc, diag_name, port, inputs, quiet, paused=True,
              from_port=None):
    """Blast N inputs at 127.0.0.1:port; return (families, rejects by kind, drops).

    quiet: {topic: message type} that garbage must not make anything publish on (latched
    topics: only what they held before). paused: the sim is paused and must not step.
    from_port: send from this port (a fuzzer speaking as the FC comes from its address).
    """
    node, ex = probe_node(ros_context, 'fuzz_probe')
    diags, heard, status = [], {t: [] for t in quiet}, []
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 50)
    node.create_subscription(SimStatus, '/sim/status', status.append, qos.LATCHED)
    for topic, typ in quiet.items():
        node.create_subscription(typ, topic, heard[topic].append,
                                 qos.LATCHED if typ in (LeakState, JsonData, UInt8)
                                 else qos.COMMAND)
    assert spin_until(node, ex, lambda: port_counts(diags, diag_name) and status, 30.0), \
        procs.output(node_proc)
    spin_for(node, ex, 0.5)            # latched messages in
    # rejects of the set-up (a USV init refused while the swarm node was still starting)
    base = int(port_counts(diags, diag_name).get('rejected', 0))
    base_kinds = {k: int(v) for k, v in port_counts(diags, diag_name).items()
                  if k.startswith('rejected_') and not k.endswith('_per_s')}
    before = {t: list(v) for t, v in heard.items()}
    steps = status[-1].steps
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if from_port is not None:
        sock.bind(('127.0.0.1', from_port))
    fams, drops, wall = blast(sock, ('127.0.0.1', port), inputs, N)
    assert wait_drained(port), 'the bridge stopped reading'
    expected = N - drops

    def counted():
        return int(port_counts(diags, diag_name).get('rejected', -1)) - base >= expected
    spin_until(node, ex, counted, 20.0)
    spin_for(node, ex, 1.2)            # one more status: nothing after
    rejects = {k[len('rejected_'):]: int(v) - base_kinds.get(k, 0)
               for k, v in port_counts(diags, diag_name).items()
               if k.startswith('rejected_') and not k.endswith('_per_s')}
    total = int(port_counts(diags, diag_name)['rejected']) - base
    assert total == expected, (total, expected, base, drops, dict(fams), rejects)
    assert drops <= N // 100, f'the kernel dropped {drops} of {N}: pacing failed'
    assert node_proc.poll() is None, 'the bridge died'
    for topic in quiet:
        assert heard[topic] == before[topic], f'garbage made {topic} publish'
    if paused:
        assert status[-1].steps == steps and status[-1].state == 2, 'the sim stepped'
    out = procs.output(node_proc)
    assert 'Traceback' not in out
    warnings = len(re.findall(r'input rejected', out))
    kinds = sum(1 for v in rejects.values() if v)
    # rate-limited per kind: at most one warning of a kind per period
    assert warnings <= kinds * (wall / WARN_PERIOD_S + 2), (warnings, wall, kinds)
    print(f'\nFUZZ {diag_name}: {N} inputs in {wall:.1f} s ({N / wall:.0f}/s), kernel drops '
          f'{drops}, rejected {total} (' + ', '.join(f'{k} {v}' for k, v in rejects.items()
                                                      if v) +
          f'), warnings logged {warnings}, node up, nothing published; families: ' +
          ', '.join(f'{k} {v}' for k, v in sorted(fams.items())))
    return fams, rejects, drops


def test_fuzz_mavlink_port(procs, ros_context):
    port = free_ports(2)
    # sim_quad_hil composition:=split: the world paused, the quad's bridge its own process
    bridge = start(procs, 'sim_quad_hil', {
        'composition': 'split', 'sensor_topics': False, 'summary': False,
        'bind': f'127.0.0.1:{port}', 'fc_address': f'127.0.0.1:{port + 1}'},
        nodes=('world_node', 'mavlink_bridge'),
        params={'world_node': {'start_paused': True},
                'mavlink_bridge': {'warn_period_s': WARN_PERIOD_S}})['mavlink_bridge']
    fams, rejects, drops = fuzz_port(procs, ros_context, bridge, 'MAVLink HIL link', port,
                                     MavlinkInputs(seed=11),
                                     {'/quad/effector_command': AircraftEffectorCommand},
                                     from_port=port + 1)   # as the FC, from fc_address
    if drops == 0:                       # which kinds, exactly
        assert rejects['value'] == fams['bad_value'], (rejects, fams)
        assert rejects['target'] == fams['not_for_us'], (rejects, fams)
        assert rejects['peer'] == rejects['invalid'] == 0, rejects


def test_fuzz_imc_port(procs, ros_context):
    port = free_ports(2)
    # sim_imc: the boat's world paused, its IMC bridge /usv/imc_bridge
    bridge = start(procs, 'sim_imc', {
        'summary': False, 'imc_bind': f'127.0.0.1:{port}', 'imc_peers': f'127.0.0.1:{port + 1}'},
        params={'world_plant': {'start_paused': True},
                'imc_bridge': {'warn_period_s': WARN_PERIOD_S}})['imc_bridge']
    fams, rejects, drops = fuzz_port(procs, ros_context, bridge, 'IMC link', port,
                                     ImcInputs(seed=12),
                                     {'/usv/effector_command': AircraftEffectorCommand,
                                      '/usv/autopilot_command': AutopilotCommand,
                                      '/usv/leaks': LeakState},
                                     from_port=port + 1)   # as the peer: control_from peers
    if drops == 0:
        assert rejects['value'] == fams['bad_value'], (rejects, fams)
        assert rejects['not_for_us'] == fams['not_for_us'], (rejects, fams)
        assert rejects['unhandled'] == fams['unhandled'], (rejects, fams)
        assert rejects['invalid'] == 0, rejects


def test_fuzz_usv_ui_port(procs, ros_context):
    port = free_ports(2)
    procs.node('sim_dynamics.usv_swarm_node', 'usv_swarm_node', {}, ns='/swarm')
    bridge = procs.node('usv_bridge.usv_bridge_node', 'usv_bridge',
                        {'bind': f'127.0.0.1:{port}', 'ui_address': f'127.0.0.1:{port + 1}',
                         'warn_period_s': WARN_PERIOD_S, 'use_sim_time': True}, ns='/swarm')
    ui = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    ui.bind(('127.0.0.1', port + 1))
    ui.settimeout(1.0)
    init = json.loads((CONFIG / 'SimConfig.json').read_text())
    for _ in range(30):                  # a session runs: commands 22 would be taken
        ui.sendto(json.dumps(init).encode(), ('127.0.0.1', port))
        try:
            if json.loads(ui.recv(65535)).get('ok'):
                break
        except (socket.timeout, AttributeError, ValueError):
            continue
    ui.sendto(b'[26, 2]', ('127.0.0.1', port))
    time.sleep(0.5)
    ids = [b['id'] for b in init['boats']]
    fams, rejects, drops = fuzz_port(procs, ros_context, bridge, 'USV UI link', port,
                                     UsvInputs(boat_ids=ids, seed=13),
                                     {'/swarm/command': BoatCommand,
                                      '/swarm/config': JsonData, '/swarm/session': UInt8},
                                     paused=False)     # the session (26:2) runs the swarm
    assert rejects['peer'] == 0 and rejects['state'] == 0, rejects


def test_fuzz_config_files_raise_only_config_errors(tmp_path):
    """Mutated scenario YAML, SimConfig JSON and type tables: ConfigError or a valid load."""
    from sim_core.scenario import load_scenario
    from sim_dynamics.core.swarm_config import load_swarm_config
    from sim_dynamics.core.usv_swarm import TypeTable
    rng = random.Random(5)
    types = TypeTable.load('usv_types.yaml')
    cases = [(CONFIG / 'scenarios' / 'default.yaml', load_scenario),
             (CONFIG / 'scenarios' / 'harbour.yaml', load_scenario),
             (CONFIG / 'SimConfig.json',
              lambda p: load_swarm_config(str(p), types.boats, types.obstacles, 10000)),
             (CONFIG / 'usv_types.yaml', lambda p: TypeTable.load(str(p)))]
    outcomes = {'refused': 0, 'loaded': 0}
    for src, load in cases:
        text = src.read_text()
        for k in range(FILE_N):
            f = tmp_path / f'{k}{src.suffix}'
            f.write_text(mutated_text(text, rng), errors='surrogatepass')
            try:
                cfg = load(f)
            except ConfigError:
                outcomes['refused'] += 1
                continue
            outcomes['loaded'] += 1
            for v in _numbers(cfg):              # what loads is finite
                assert math.isfinite(v), (src.name, f.read_text()[:500])
    assert outcomes['refused'] > FILE_N and outcomes['loaded'] > FILE_N // 6, outcomes
    print(f'\nFUZZ config files: {4 * FILE_N} mutants, {outcomes["refused"]} refused with '
          f'ConfigError, {outcomes["loaded"]} loaded (all finite), 0 other exceptions')


def test_config_files_that_fuzzing_broke_are_config_errors(tmp_path):
    """What the config fuzzing found (each raised something other than ConfigError)."""
    from sim_core.scenario import load_scenario
    from sim_dynamics.core.swarm_config import load_swarm_config
    from sim_dynamics.core.usv import BoatType
    from sim_dynamics.core.usv_swarm import TypeTable
    types = TypeTable.load('usv_types.yaml')
    f = tmp_path / 'f.yaml'
    cases = [
        ((CONFIG / 'scenarios' / 'default.yaml').read_text().replace(
            'params: iris', 'params: iris' + '9' * 400), load_scenario,
         'not found'),                                           # name too long for the FS
        ('boat_types: wamv\nobstacle_types: {}\n', lambda p: TypeTable.load(str(p)),
         'mapping'),
        ('true: 1\nmass_kg: 10\n', BoatType.from_yaml, 'unknown key true'),
        ('scenario: [\xff\xfe', load_scenario, 'cannot read'),     # not UTF-8
        ('[' * 5000, load_scenario, 'cannot read'),                # nested too deep for YAML
    ]
    for text, load, msg in cases:
        f.write_bytes(text.encode('latin-1'))
        with pytest.raises(ConfigError, match=msg):
            load(f)
    init = json.loads((CONFIG / 'SimConfig.json').read_text())
    j = tmp_path / 'init.json'
    j.write_text(json.dumps(init).replace('"time_scale": 1', '"time_scale": ' + '9' * 400, 1))
    with pytest.raises(ConfigError, match='time_scale: must be finite'):
        load_swarm_config(str(j), types.boats, types.obstacles, 100)[0]


def _numbers(obj, depth=0):
    """Every float in a loaded config (dataclasses, tuples, dicts), for the finiteness check."""
    if depth > 6:
        return
    if isinstance(obj, float):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _numbers(x, depth + 1)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _numbers(x, depth + 1)
    elif hasattr(obj, '__dataclass_fields__'):
        for name in obj.__dataclass_fields__:
            yield from _numbers(getattr(obj, name), depth + 1)


@pytest.mark.parametrize('target,runs', [('usv', 20000), ('imc', 20000), ('mavlink', 5000),
                                         ('config', 3000)])
def test_coverage_guided_fuzzing_of_the_decoders(target, runs):
    """Atheris (libFuzzer) on each decoder: only the documented errors escape (fixed seed)."""
    r = subprocess.run([sys.executable, str(REPO_DIR / 'scripts' / 'fuzz_codecs.py'), target,
                        f'-runs={runs}', '-seed=1', '-max_len=4096', '-timeout=10'],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert f'Done {runs} runs' in r.stderr, r.stderr[-2000:]
