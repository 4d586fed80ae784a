"""What a world's vehicles take from outside its step: their controllers' commands (a mixin).

WorldNode (sim_world.world_node) takes, per vehicle:
- a controller answering each step: its MAVLink bridge's command by direct call (world_plant:
  ``apply_command``, the member's plant answer) or, from a bridge in another process or from
  any ROS node (controller topic), /<name>/effector_command (aerosim_msgs/
  AircraftEffectorCommand), stamped with the state it answers (lockstep). The command goes
  to the vehicle's model, which checks it (VehicleModel.apply_command: a quad's throttles, a
  plane's surfaces, throttle and brakes); a refusal is counted and logged;
- a vehicle flown over IMC (its controller's way has link IMC: an imc_bridge in /<name>
  driven by DUNE): /<name>/effector_command to its model's effector() (a boat: throttle and
  rudder; an AUV: thruster and fins) and /<name>/autopilot_command to its holds() (a boat's
  heading and speed; an AUV refuses them), as usv_node took them.
Every entry is ``serialized`` (the world's step lock): safe from any thread.
"""

from aerosim_msgs.msg import AircraftEffectorCommand, AutopilotCommand
from kinds.entry import IMC, entry
from sim_core.clock import SimState
from sim_core.members import Member
from sim_core.validate import FieldError
from sim_dynamics.core.plane import EffectorCommand
from sim_ros import qos
from sim_ros.convert import time_ns
from sim_ros.plant import Command
from sim_ros.sim_time_node import serialized
from sim_world.core.node_io import imc_holds


def effector_command(msg: AircraftEffectorCommand) -> EffectorCommand:
    """The message's arrays as the model's command (each kind reads what it flies with)."""
    return EffectorCommand(
        msg.throttle_cmd, msg.aileron_cmd_angle_rad, msg.elevator_cmd_angle_rad,
        msg.rudder_cmd_angle_rad, msg.thrust_tilt_cmd_angle_rad, msg.flap_cmd_angle_rad,
        msg.speedbrake_cmd_angle_rad, msg.landing_gear_cmd, msg.wheel_steer_cmd_angle_rad,
        msg.wheel_brake_cmd)


class WorldInputs:
    """The command inputs of WorldNode (see the module docstring)."""

    def _subscribe_inputs(self, direct: bool) -> None:
        """The command topics of the vehicles (direct: the MAVLink ones answer by call)."""
        for m in self.members:
            if m.over_topic or (m.over_mavlink and not direct):
                self.create_subscription(
                    AircraftEffectorCommand, f'/{m.name}/effector_command',
                    lambda msg, i=m.index: self._on_effector(msg, i), qos.COMMAND)
            elif entry(m.kind).controllers[m.controller].link == IMC:
                self._subscribe_imc(m)

    @serialized
    def apply_command(self, cmd: Command, stamp_ns: int, member: int) -> None:
        """Take the command of vehicle member (world index) answering the state of stamp_ns.

        Checked by its model (VehicleModel.apply_command); a refusal is counted and logged.
        In lockstep the answer completing the awaited step integrates the next step(s).
        Safe from any thread and from a state listener.
        """
        if self.clock.state != SimState.RUNNING:
            return
        m = self.members[member]
        try:
            self.models[member].apply_command(cmd)      # its kind's check (VehicleModel)
        except FieldError as exc:
            return self._reject(f'/{m.name} command', str(exc))
        self.judge.command(member)
        self._answered(stamp_ns, m.answers)

    def _on_effector(self, msg: AircraftEffectorCommand, i: int):
        """A vehicle's command from a bridge in another process, or any ROS node."""
        self.apply_command(effector_command(msg), time_ns(msg.header.stamp), i)

    def _subscribe_imc(self, m: Member):
        """A vehicle flown from outside over IMC (imc_bridge in /<name>): its command topics."""
        i = m.index
        self.create_subscription(AircraftEffectorCommand, f'/{m.name}/effector_command',
                                 lambda msg: self._on_imc_effector(msg, i), qos.COMMAND)
        self.create_subscription(AutopilotCommand, f'/{m.name}/autopilot_command',
                                 lambda msg: self._on_imc_autopilot(msg, i), qos.COMMAND)

    @serialized
    def _on_imc_effector(self, msg: AircraftEffectorCommand, i: int):
        """throttle_cmd[0] in [-1, 1]; rudder (AeroSim: + bow to port) and elevator angles."""
        try:
            self.models[i].effector(msg.throttle_cmd, msg.rudder_cmd_angle_rad,
                                    msg.elevator_cmd_angle_rad)
        except (FieldError, ValueError) as exc:
            return self._reject(f'/{self.members[i].name} effector_command', str(exc))

    @serialized
    def _on_imc_autopilot(self, msg: AutopilotCommand, i: int):
        """heading_hold + heading_setpoint_deg, airspeed_hold + airspeed_setpoint_kts [kn]."""
        what = f'/{self.members[i].name} autopilot_command'
        try:
            self.models[i].holds(*imc_holds(msg.heading_hold, msg.heading_setpoint_deg,
                                            msg.airspeed_hold, msg.airspeed_setpoint_kts))
        except (FieldError, ValueError) as exc:
            return self._reject(what, str(exc))
