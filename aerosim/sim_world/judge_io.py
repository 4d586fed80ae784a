"""The run's one judge, in the world's process: it sees every step, it ends the run.

RunJudge follows every vehicle of the world on ground truth, by its kind's judge
(sim_report.core.world.WorldJudge), fed from the world's own samples in the stepping thread at
sample_rate_hz of sim time: no sample is lost at any time scale, whatever the load (a judge
over DDS lost them as fast as possible). What else ends a vehicle's mission reaches it at
once: the world's contacts and deck events (by call), each MAVLink vehicle's link status
(/<name>/mavlink/status: its FC refused to fly, or went silent), a vehicle flown by any ROS
node that was never commanded (command_timeout_s of sim), the model diverging.

When every vehicle is over (or at max_sim_s) with report: true, it writes the summary and the
plot into the run's own folder (sim_report.core.output: <output_dir>/<title>-<scenario>-<UTC
time>/, latest linked) and then sets ``finished`` (0: every mission complete, 1: not): the
world's process then exits with it, and the graph with it. Stopped before that (Ctrl-C,
stop_after_s) with summary: true, it writes the same, result stopped, with what was judged
so far.
"""

from datetime import datetime, timezone
import threading
import time
from typing import List, Optional

from aerosim_msgs.msg import MavlinkLinkStatus
from kinds.entry import judges_of
from mavlink_bridge.core.peers import is_flight_controller
from sim_core.clock import SimState
from sim_core.decimator import Decimator
from sim_core.errors import ConfigError
from sim_report.core.mission import preload_plotting
from sim_report.core.output import run_folder, write_summary
from sim_report.core.params import JUDGE_PARAMETERS, JudgeConfig
from sim_report.core.report_lines import judge_lines
from sim_report.core.world import WorldJudge
from sim_ros import qos
from sim_ros.params import read_config

NS_PER_S = 1_000_000_000


class RunJudge:
    """The judge of a WorldNode's run (module docstring)."""

    def __init__(self, node):
        """Read the judge's parameters on node (a WorldNode, its members and world built)."""
        self.node = node
        self.cfg = cfg = read_config(node, JudgeConfig, JUDGE_PARAMETERS)
        self.members = node.members
        if cfg.report and not any(m.scenario.mission for m in self.members):
            raise ConfigError(f'report: true judges missions, and no vehicle of scenario '
                              f'{node.scenario.name} has one ('
                              + ', '.join(m.name for m in self.members) + '): give one a '
                              'mission, or run without report:=true')
        self.judge = WorldJudge(self.members, judges_of(self.members),
                                same_time_s=1.5 / cfg.sample_rate_hz,
                                decks=[model.deck for model in node.models])
        self.decs = [Decimator(cfg.sample_rate_hz) for _ in self.members]
        self.commanded = [not m.over_topic for m in self.members]
        self.fc_heard = [False] * len(self.members)
        self.started = datetime.now(timezone.utc)
        self.finished: Optional[int] = None       # the exit code once judged and written
        # held while the verdict is written: ``ending`` from its first line (nothing more is
        # judged), ``finished`` after its last (the process may exit: the summary and the
        # plot are on disk; it was set first, and the process exited while the stepping
        # thread still drew the plot: no plot, and the C++ runtime aborted, exit code -6)
        self._finish_lock = threading.Lock()
        self.ending = False
        self.folder = None
        self._wall0: Optional[float] = None        # wall time of the first step [s]
        # (wall [s], sim [s], steps, late steps) at the first motion: the flight's pacing
        self._moving: Optional[tuple] = None
        for m in self.members:
            if m.over_mavlink:
                node.create_subscription(MavlinkLinkStatus, f'/{m.name}/mavlink/status',
                                         lambda msg, i=m.index: self.on_link(i, msg),
                                         qos.LATCHED)
        if cfg.report or cfg.summary:
            preload_plotting()
        node.create_timer(0.2, self._watch)
        node.get_logger().info(
            f'judge: the {len(self.members)} vehicle(s) of {node.scenario.name} on ground '
            'truth, each by its kind (' + ', '.join(
                f'{m.name}: {len(m.scenario.mission)} items' for m in self.members) + ')'
            + (f'; the run ends with its verdict (at the latest at {cfg.max_sim_s:g} s of sim)'
               if cfg.report else '; the summary is written when the run stops'
               if cfg.summary else ''))

    # --- inputs ------------------------------------------------------------------------------
    def on_step(self, t_ns: int, samples, models) -> None:
        """After each world step (the stepping thread, step lock held): sample what is due."""
        if self.ending:
            return
        t = t_ns / NS_PER_S
        if self._wall0 is None:
            self._wall0 = time.monotonic()
        for i, (s, model) in enumerate(zip(samples, models)):
            if not self.decs[i].due(t_ns):
                continue
            j = self.judge.entries[i].judge
            n = len(j.reached_at_s)
            self.judge.feed(i, t, s.p_enu, s.v_enu, s.q_enu_flu, model.idle())
            if self._moving is None and float(s.v_enu[0]) ** 2 + float(s.v_enu[1]) ** 2 + \
                    float(s.v_enu[2]) ** 2 > 0.25:
                c = self.node.clock
                self._moving = (time.monotonic(), t, c.steps, c.late_steps)
            if len(j.reached_at_s) > n:
                m = self.members[i]
                self.node.get_logger().info(
                    f'[t={t:7.2f} s] truth: {m.name} item {n} '
                    f'({m.scenario.mission[n].command}) reached')
        for i, m in enumerate(self.members):
            if not self.commanded[i] and t >= self.cfg.command_timeout_s:
                self.commanded[i] = True
                if self.judge.not_commanded(i, f'no command on its topics (/{m.name}/'
                                            f'effector_command) in '
                                            f'{self.cfg.command_timeout_s:g} s of sim '
                                            f'(controller {m.controller}: nothing flies it)'):
                    self.node.get_logger().warning(f'[t={t:7.2f} s] {m.name}: '
                                                   f'{self.judge.entries[i].why}')
        self._check(t)

    def command(self, i: int) -> None:
        """Vehicle i took a command from its controller over a topic."""
        self.commanded[i] = True

    def event(self, t_ns: int, vehicle: str, other: str, speed: float) -> None:
        """A contact or impact of the world (its Event's fields)."""
        if not self.ending:
            self.judge.contact(t_ns / NS_PER_S, vehicle, other, speed)

    def deck_event(self, e) -> None:
        """A touchdown on, lift-off from or slide off a deck (sim_world.core.decks.DeckEvent)."""
        if not self.ending:
            self.judge.deck_event(e.t_ns / NS_PER_S, e.vehicle, e.deck, e.what,
                                  e.normal_speed, e.pad_xy)

    def on_link(self, i: int, msg: MavlinkLinkStatus) -> None:
        """A MAVLink vehicle's bridge: its FC heard, gone, or refusing to fly."""
        if self.ending:
            return
        log, name, t = self.node.get_logger(), self.members[i].name, self.judge.t
        if msg.fc_failure:
            if self.judge.fc_refused(i, msg.fc_failure):
                log.error(f'[t={t:7.2f} s] {name}: the flight controller will not fly: '
                          f'{msg.fc_failure}')
        elif any(is_flight_controller(p.mav_type, p.autopilot) for p in msg.peers):
            self.fc_heard[i] = True
        elif self.fc_heard[i] and self.judge.fc_lost(i, t):
            log.warning(f'[t={t:7.2f} s] {name}: its flight controller is gone (no HEARTBEAT '
                        "within the bridge's peer timeout): not judged further")
        self._check(t)

    # --- the end -----------------------------------------------------------------------------
    def _check(self, t: float) -> None:
        if not self.cfg.report or self.ending:
            return
        if self.judge.over:
            self.finish()
        elif t >= self.cfg.max_sim_s:
            self.finish(why=f'gave up at max_sim_s = {self.cfg.max_sim_s:g} s of sim')

    def _watch(self) -> None:
        """Wall timer: a run whose clock stopped (the model diverged, stop_after_s) ends."""
        if not self.ending and self.node.clock.state == SimState.STOPPED and (
                self.cfg.report):
            self.finish(stopped=True, why=self.node.message)

    def stop(self) -> None:
        """The run is stopped (Ctrl-C, SIGTERM): the summary says so, if one is written.

        A verdict being written meanwhile is waited for (finish), not cut short.
        """
        if self.cfg.summary or self.cfg.report:
            self.finish(stopped=True, why=f'stopped at t = {self.judge.t:.2f} s of sim')

    def finish(self, stopped: bool = False, why: str = '') -> None:
        """Write the summary and the plot, then set the exit code (once, from any thread).

        A second caller meanwhile (the wall timer, a signal's stop) waits for the first.
        """
        with self._finish_lock:
            if self.ending:
                return
            self.ending = True
            code = 1
            try:
                code = self._write(stopped, why)
            finally:
                self.finished = code

    def _write(self, stopped: bool, why: str) -> int:
        """The summary and the plot in the run's folder, logged; the exit code."""
        now = time.monotonic()
        wall = now - self._wall0 if self._wall0 is not None else 0.0
        s = self.judge.summary(wall, stopped=stopped)
        reasons: List[str] = [f'{e.member.name}: {e.why}' for e in self.judge.entries if e.why]
        s['ended'] = why or ('every vehicle is over' + (f' ({"; ".join(reasons)})'
                                                          if reasons else ''))
        s['scenario'] = self.node.scenario.name
        s['started_utc'] = self.started.isoformat(timespec='seconds')
        if self._moving is not None and now > self._moving[0]:
            s['flight_real_time_factor'] = round((self.judge.t - self._moving[1])
                                                 / (now - self._moving[0]), 2)
        c, g = self.node.clock, self.node.gate
        s.update(steps=c.steps, late_steps=c.late_steps,
                 late_step_share=round(c.late_steps / c.steps, 5) if c.steps else None,
                 lockstep_timeouts=g.timeouts, time_scale=c.time_scale,
                 rejected_inputs=self.node.rejected)
        if self._moving is not None and c.steps > self._moving[2]:
            # from the first motion on: the start-up (the FC's, a free run) left out
            s['flight_late_step_share'] = round((c.late_steps - self._moving[3])
                                                / (c.steps - self._moving[2]), 5)
        self.folder = run_folder(self.cfg.output_dir, self.cfg.title, self.node.scenario.name,
                                 self.started)
        js, png = write_summary(self.folder, s,
                                lambda path: self.judge.plot(path, self.cfg.title))
        for line in judge_lines(s, self.cfg.title, js, png):
            self.node.get_logger().info(line)
        return 0 if s['result'] == 'complete' else 1
