"""The MAVLink bridge's ROS messages: mavlink/status (latched), /diagnostics' extra, commands."""

import time

from aerosim_msgs.msg import AircraftEffectorCommand, MavlinkLinkStatus, MavlinkPeer
from mavlink_bridge.core.bridge import HilBridge
from sim_dynamics.core.plane import EffectorCommand
from sim_ros.convert import time_msg


def link_status(core: HilBridge, link: str, rejects: dict) -> MavlinkLinkStatus:
    """The status message of a bridge: link, peers, counters, rejects by kind, mission."""
    st = MavlinkLinkStatus()
    st.header.stamp = time_msg(max(core.last_state_ns, 0))
    st.link = link
    st.system_id, st.component_id = core.sysid, core.compid
    now = time.monotonic()
    for p in core.peers():
        st.peers.append(MavlinkPeer(
            system_id=p.sysid, component_id=p.compid, mav_type=p.mav_type,
            autopilot=p.autopilot, system_status=p.system_status, address=p.address,
            last_seen_age_s=now - p.last_seen, heartbeats=p.heartbeats))
    n, r = core.count, rejects
    st.rx_messages, st.rx_wrong_target = n['rx'], r['target']
    st.rx_bad_frames = r['truncated'] + r['undecodable'] + r['invalid'] + r['signed']
    st.rejected_actuators, st.ignored_actuators = r['value'], n['ignored']
    st.actuator_messages, st.hil_sensor_sent, st.hil_gps_sent = (
        n['actuators'], n['sensor'], n['gps'])
    m = core.mission
    st.mission_state, st.mission_result = m.state, m.result
    st.mission_transfers, st.mission_resent = m.transfers, m.resent
    se = core.session
    st.autostart_state = se.autostart.state if se.autostart else ''
    st.fc_params_result = se.params.result if se.params else ''
    st.fc_failure = se.failure()
    st.fc_events = se.words.events
    return st


def diagnostic_values(core: HilBridge, mission_link: str) -> list:
    """The link's (key, value) pairs for /diagnostics beyond the counts (mission, FC, words)."""
    extra = [('mission', f'{core.mission.state} {core.mission.result}'.strip()),
             ('mission_refused', core.mission.refused),
             ('served_fc', core.served.describe()),
             ('send_errors', sum(ep.link.send_errors for ep in core.endpoints()))]
    if mission_link:
        extra.append(('mission_link', mission_link))
    if core.autostart:
        extra.append(('autostart', core.autostart.state))
    se = core.session
    if se.params is not None:
        extra.append(('fc_parameters', f'{se.params.state} {se.params.result}'.strip()))
    extra.append(('fc_words', se.words.describe()))
    if se.failure():
        extra.append(('fc_failure', se.failure()))
    return extra


def fill_command(cmd: AircraftEffectorCommand, command, t_ns: int) -> AircraftEffectorCommand:
    """Fill cmd (reused: once per step) with motor throttles or a plane's EffectorCommand."""
    cmd.header.stamp = time_msg(t_ns)
    if isinstance(command, EffectorCommand):
        cmd.throttle_cmd = list(command.throttle)
        cmd.aileron_cmd_angle_rad = list(command.aileron_rad)
        cmd.elevator_cmd_angle_rad = list(command.elevator_rad)
        cmd.rudder_cmd_angle_rad = list(command.rudder_rad)
        cmd.flap_cmd_angle_rad = list(command.flap_rad)
    else:
        cmd.throttle_cmd = [float(x) for x in command]
    return cmd
