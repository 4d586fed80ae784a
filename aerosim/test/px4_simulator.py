"""PX4's simulator link: src/modules/simulation/simulator_mavlink/SimulatorMavlink.cpp (v1.16).

Part of the PX4 stand-in (px4_sitl.py):
- a TCP client to the simulator's port (4560 + instance), retrying until it connects (run():
  a new socket, TCP_NODELAY, connect(), again after 500 µs on failure; here after 50 ms, to
  spare a 2-core machine), and connecting once only: run() leaves that loop for its receive
  loop, which polls the one socket for ever (`if (len > 0)` parses; a closed connection
  reads 0 and is polled again). A simulator that closes the connection, or lets another
  take its place, has lost PX4 for good: its sends fail (`Failed sending mavlink message`,
  PX4_WARN; SIGPIPE is ignored, platforms/posix/src/px4/common/main.cpp) and no HIL_SENSOR
  comes, so its lockstep clock, and everything on it, stops. The stand-in says so and
  exits (`sim_link_closed` in its report);
- PX4's MAVLink instances start only after the first HIL_SENSOR set the lockstep clock (rcS:
  simulator_mavlink, then px4-rc.mavlink; PX4 v1.16 logs "setting initial absolute time"
  before its first "[mavlink] mode: ..."): datagrams to its MAVLink ports before that are lost;
- exactly one HEARTBEAT at start (send(), the sim_send thread run() starts once connected:
  `send_heartbeat()`, type 0, autopilot 12, base_mode 128 if armed), and COMMAND_LONG
  SET_MESSAGE_INTERVAL(HIL_STATE_QUATERNION, 5000 us) (run(): request_hil_state_quaternion()),
  both from MAV_SYS_ID:MAV_COMP_ID (rcS: instance + 1, 1), and nothing else before the first
  HIL_SENSOR (send_controls() waits for actuator outputs, which need PX4's clock);
- handle_message() takes HIL_SENSOR, HIL_GPS, HIL_STATE_QUATERNION, ... and nothing else:
  mission and command messages on this link are ignored;
- lockstep: HIL_SENSOR (id 0) sets PX4's clock to its time_usec (px4_clock_settime); every
  module runs on that clock, so PX4's own timeouts are in sim time;
- one HIL_ACTUATOR_CONTROLS per HIL_SENSOR (send_controls()): time_usec = hrt_absolute_time()
  (the sensor's time), controls = actuator outputs if armed else 0, mode = CUSTOM_MODE_ENABLED
  | SAFETY_ARMED if armed, flags = 1 (lockstep), from MAV_SYS_ID:MAV_COMP_ID.

Scheduling and cost, as PX4 SITL runs: with --realtime the simulator link thread runs
SCHED_FIFO 99, as PX4 started as root runs sim_rcv and its work queues (tasks.cpp; a normal
thread where not permitted, as PX4 falls back), while it waits for and answers a step; the
Python FC core, a cost PX4 does not have, runs at normal priority (Px4Sitl._fifo). PX4 v1.16
answers a HIL_SENSOR ~50 µs after it was sent (bench/bench_px4.py measures it), the Python FC
core here takes ~150 µs more: with --step-cost-us the stand-in answers each HIL_SENSOR that
long after it came in, with the outputs it computed from the previous one, and runs its FC
core after the answer (one step of extra control delay), so that its speed predicts the real
one's; without, it answers as PX4 does, from this step's sensors, as soon as it has them.
"""

import os
import socket
import time

from mavlink_bridge.core.mav import mavlink, pack

PLANE_THROTTLE = 4                  # controls[] of airframe 1030's motor (output 5)
REALTIME_PRIORITY = 99      # PX4 SITL as root: sim_rcv and the work queue threads (wq:manager)


class SimulatorLink:
    """Px4Sitl's simulator link: connect, the lockstep step, PX4's answer and what follows it.

    A mixin of Px4Sitl (px4_sitl.py), on its state: sim_addr, sim, tcp, ap, mm, links, gcs,
    params, plane, armed, events, lock, now_us, next_hb_us, step_cost_s, realtime, counts,
    sim_stats, stop; the commander's step, checks and HEARTBEAT (px4_commander.py), the links'
    _udp_send (px4_links.py), _distance and _landing_target (px4_precland.py).
    """

    # --- simulator link (TCP) ----------------------------------------------------------------
    def connect(self, timeout_s: float = 60.0):
        """Connect to the simulator as PX4 does, then say hello once."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.tcp = socket.create_connection(self.sim_addr, timeout=1.0)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self.tcp.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        hb = self.sim.heartbeat_encode(0, mavlink.MAV_AUTOPILOT_PX4, 0, 0, 0)
        cmd = self.sim.command_long_encode(0, 0, mavlink.MAV_CMD_SET_MESSAGE_INTERVAL, 0,
                                           mavlink.MAVLINK_MSG_ID_HIL_STATE_QUATERNION, 5000.0,
                                           0, 0, 0, 0, 0)
        self._sim_send(pack(self.sim, hb))      # sim_send: its first act
        self._sim_send(pack(self.sim, cmd))     # sim_rcv, after starting sim_send

    def run_sim_link(self):
        """Receive loop of the simulator link until the simulator closes it (never again)."""
        self.tcp.settimeout(0.2)
        while not self.stop.is_set():
            try:
                data = self.tcp.recv(65536)
            except socket.timeout:
                continue
            except OSError as exc:
                return self._sim_link_closed(f'connection error: {exc.strerror or exc}')
            if not data:
                return self._sim_link_closed('the simulator closed it')
            t_in = time.perf_counter()
            for m in self.sim.parse_buffer(data) or []:
                if m.get_type() == 'BAD_DATA':
                    continue
                self.sim_stats.add(m)
                t = m.get_type()
                if t == 'HIL_SENSOR':
                    self._hil_sensor(m, t_in)
                elif t == 'HIL_GPS':
                    with self.lock:
                        self.ap.hil_gps(m)
                elif t == 'LANDING_TARGET':
                    with self.lock:
                        self._landing_target(m)
                elif t == 'DISTANCE_SENSOR':
                    with self.lock:
                        self._distance(m)
                elif t not in ('HIL_STATE_QUATERNION',):
                    self.counts['ignored_on_sim_link'] += 1

    def _sim_link_closed(self, why: str) -> None:
        """The simulator link ended: PX4 polls it on and never connects again (run())."""
        self.counts['sim_link_closed'] += 1
        self.log.append(f'simulator link closed ({why}): PX4 does not connect again, its '
                        'lockstep clock stops')

    def _sim_send(self, data: bytes) -> None:
        """send_mavlink_message(): a failed send is a warning (SIGPIPE ignored), not an end."""
        try:
            self.tcp.sendall(data)
        except OSError as exc:
            self.counts['sim_send_failed'] += 1
            if self.counts['sim_send_failed'] == 1:
                self.log.append(f'Failed sending mavlink message: {exc.strerror or exc}')

    def _hil_sensor(self, m, t_in: float = 0.0):
        """One lockstep step: PX4's clock to the sensors' time, the FC's answer, its links.

        As PX4 does, the answer carries the outputs computed from this HIL_SENSOR. With
        --step-cost-us it goes out that long after the sensors came in, with the outputs
        computed from the previous HIL_SENSOR, and the FC core runs after it: the Python core
        takes longer per step than PX4 (module docstring), and the calibrated pace is the
        point there (one step, 4 ms, of extra control delay; the missions fly the same).
        """
        pipelined = self.step_cost_s > 0.0
        if not pipelined:
            self._fifo(False)
        with self.lock:
            self.now_us = m.time_usec            # px4_clock_settime
            if not pipelined:
                self._next_thr = self.ap.hil_sensor(m)
                self._commander()
            out = self._controls(self._next_thr)
        if pipelined:
            while time.perf_counter() - t_in < self.step_cost_s:
                pass
        self._sim_send(pack(self.sim, out))
        if pipelined:
            self._fifo(False)
        try:
            self._after_answer(m, pipelined)
        finally:
            self._fifo(True)

    def _fifo(self, on: bool):
        """--realtime: SCHED_FIFO while waking for and answering a step, normal for the FC core.

        PX4's threads at priority 99 work ~50 µs per step and sleep; the Python FC core's
        ~150 µs more is not a real-time load PX4 puts on the machine. Run at 99 too, it and the
        bridge's receive thread (spinning for the answer at PX4's priority) would hold both
        cores of a 2-core machine under SCHED_FIFO, and every normal thread would wait for the
        kernel's real-time throttling (the bridge's topics, its executor, flight_report), where
        with PX4 they share the core PX4 leaves idle between steps.
        """
        if self.realtime:
            os.sched_setscheduler(0, os.SCHED_FIFO if on else os.SCHED_OTHER,
                                  os.sched_param(REALTIME_PRIORITY if on else 0))

    def _after_answer(self, m, pipelined: bool):
        """After the answer went out: the FC core (pipelined), PX4's mission and other links."""
        with self.lock:
            if pipelined:
                self._next_thr = self.ap.hil_sensor(m)
                self._commander()
            tick = self.mm.tick(self.gcs, self.now_us)
            beat = self.now_us >= self.next_hb_us
            if beat:
                self.next_hb_us = self.now_us + 1_000_000
                self._report()
            cur = self.events.current(self.now_us)
        self._udp_send(*tick)
        for link in self.links:
            if link.streams is not None:
                for msg in link.streams.due(self.now_us):
                    link.send(msg)
            if beat:
                link.send(self._heartbeat())
            if cur is not None:
                link.send_ext(411, cur)

    def _controls(self, thr):
        """HIL_ACTUATOR_CONTROLS at PX4's time: the outputs if armed, else 0 (send_controls)."""
        controls = list(thr) if self.armed and thr is not None else [0.0] * 16
        if self.plane and self.armed:        # fixed-wing throttle limit (TECS, FW_THR_MAX)
            controls[PLANE_THROTTLE] = min(controls[PLANE_THROTTLE], self.params['FW_THR_MAX'])
        controls += [0.0] * (16 - len(controls))
        mode = mavlink.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED | (
            mavlink.MAV_MODE_FLAG_SAFETY_ARMED if self.armed else 0)
        self.counts['hil_sensor'] += 1
        self.counts['answers'] += 1
        return self.sim.hil_actuator_controls_encode(self.now_us, controls, mode, 1)
