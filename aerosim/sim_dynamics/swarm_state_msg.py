"""The swarm as aerosim_msgs/SwarmState (messages only, no node; used by usv_swarm_node)."""

import array

import numpy as np

from aerosim_msgs.msg import SwarmState

INT_COLUMNS = ('id', 'team', 'status', 'task', 'target_id', 'control_mode')


def as_array(values, typecode: str) -> array.array:
    """A numpy array as array.array (what rclpy takes for sequence fields without a copy loop)."""
    a = array.array(typecode)
    a.frombytes(np.ascontiguousarray(values, dtype='q' if typecode == 'q' else 'd').tobytes())
    return a


def swarm_state(sim, stamp, frame_id: str, session: int, session_start, input_seq: int,
                input_source: int) -> SwarmState:
    """Every boat of sim (usv_swarm.SwarmSim) at stamp, with the session and the last input.

    x_east_m, y_north_m: ENU position [m]; the other columns are SwarmSim.columns().
    """
    m = SwarmState()
    m.header.stamp = stamp
    m.header.frame_id = frame_id
    m.session = session
    m.session_start = session_start
    m.input_seq, m.input_source = input_seq, input_source
    m.collisions = sum(sim.collisions.values())
    cols = sim.columns()
    cols['team'] = sim.team
    cols['x_east_m'] = sim.boats.e
    cols['y_north_m'] = sim.boats.n
    for name, values in cols.items():
        setattr(m, name, as_array(values, 'q' if name in INT_COLUMNS else 'd'))
    return m
