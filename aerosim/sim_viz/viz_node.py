"""viz_node: what rviz2 and Foxglove draw: paths, vehicle markers, missions, maps, TF.

mode:=vehicle (the world and its presets): for each vehicle of the world (sim_core.members.
WorldSource) subscribes /<name>/odom and publishes /<name>/path (nav_msgs/Path, bounded) and
its markers (visualization_msgs/MarkerArray, drawn by its kind: a quad's body, arms and rotor
discs coloured by spin direction, a plane, a boat's hull, an AUV; its mission items and planned
path): on /<name>/markers for a world of one vehicle, else every vehicle's (marker namespaces
<name>/..., a name label each) on the one /markers. mode:=swarm (sim_usv_swarm): subscribes
`state` (SwarmState) and the latched `config` (an init from the UI) and publishes `markers`:
hulls coloured by team (grey when out of action) with labels, bounded tracks, obstacles at
their collision radius and the map bounds. Every marker is placed in the world frame (`map`)
from the pose, so no TF is needed; where tf2_ros is importable (a real ROS install)
map->base_link is broadcast too.

Markers and paths are published on message stamps (sim time), at most marker_rate_hz: a
replayed bag draws the same.
"""

import math

from geometry_msgs.msg import Point, PoseStamped, TransformStamped
from nav_msgs.msg import Odometry, Path
from rclpy.node import Node
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from aerosim_msgs.msg import JsonData, SwarmState
from kinds.entry import entry
from sim_core.decimator import Decimator
from sim_core.frames import euler_ned_to_quat, q_ned_frd_to_enu_flu
from sim_core.members import WorldSource
from sim_core.timeutil import NS_PER_S
from sim_dynamics.core.swarm_config import json_object, load_swarm_config, parse_swarm_config
from sim_dynamics.core.usv_swarm import TypeTable
from sim_report.core.mission import item_points
from sim_ros import qos
from sim_ros.convert import set_quat, set_vec3, time_ns
from sim_ros.params import read_config
from sim_ros.run import run_node
from sim_viz.core import scene
from sim_viz.core.params import (
    MAX_BOATS,
    MODE_PARAMETERS,
    VIZ_PARAMETERS,
    VIZ_SWARM_PARAMETERS,
    VIZ_WORLD_PARAMETERS,
    ModeConfig,
    SwarmFilesConfig,
    VizConfig,
)

KINDS = {'arrow': Marker.ARROW, 'cube': Marker.CUBE, 'sphere': Marker.SPHERE,
         'cylinder': Marker.CYLINDER, 'line_strip': Marker.LINE_STRIP,
         'line_list': Marker.LINE_LIST, 'text_view_facing': Marker.TEXT_VIEW_FACING}


def to_marker(s: scene.Shape, frame_id: str, stamp) -> Marker:
    """A Shape as a visualization_msgs/Marker (ADD) in frame_id."""
    m = Marker()
    m.header.frame_id = frame_id
    m.header.stamp = stamp
    m.ns, m.id, m.type, m.action = s.ns, s.id, KINDS[s.kind], Marker.ADD
    set_vec3(m.pose.position, s.position)
    set_quat(m.pose.orientation, s.orientation)
    set_vec3(m.scale, s.scale)
    m.color = ColorRGBA(r=s.color[0], g=s.color[1], b=s.color[2], a=s.color[3])
    m.points = [Point(x=p[0], y=p[1], z=p[2]) for p in s.points]
    m.text = s.text
    return m


def tf_broadcaster(node):
    """tf2_ros.TransformBroadcaster where tf2_ros exists (real ROS installs), else None."""
    try:
        from tf2_ros import TransformBroadcaster
    except ImportError:
        return None
    return TransformBroadcaster(node)


class VizNode(Node):
    """Paths and markers for one vehicle or a swarm."""

    def __init__(self):
        """Declare parameters, load the static scene, subscribe."""
        super().__init__('viz_node')
        self.mode = read_config(self, ModeConfig, MODE_PARAMETERS).mode
        cfg = read_config(self, VizConfig, VIZ_PARAMETERS)
        self.frame, self.marker_rate_hz = cfg.world_frame_id, cfg.marker_rate_hz
        self.dec = Decimator(self.marker_rate_hz)
        self.max_boats = cfg.max_boats_drawn
        self.track_args = (cfg.path_max_points, cfg.path_min_step_m)
        self.pub_markers = self.create_publisher(MarkerArray, 'markers', qos.VIEW_PUB)
        self.tf = tf_broadcaster(self)
        self._stale = True                  # the first publication clears old markers
        self.published = 0
        if self.mode == 'vehicle':
            self._init_vehicle(read_config(self, WorldSource, VIZ_WORLD_PARAMETERS))
        else:
            self._init_swarm(read_config(self, SwarmFilesConfig, VIZ_SWARM_PARAMETERS))
        self.get_logger().info(
            f'{self.mode} markers on {self.resolve_topic_name("markers")} at '
            f'{NS_PER_S / self.dec.period_ns:g} Hz (sim); TF '
            f'{"broadcast" if self.tf else "off (no tf2_ros here; markers need none)"}')

    # --- a world's vehicles ------------------------------------------------------------------
    def _init_vehicle(self, source: WorldSource):
        members = source.members()
        n = len(members)
        if n == 1:      # one vehicle: its markers beside its path, where rviz configs look
            self.destroy_publisher(self.pub_markers)
            self.pub_markers = self.create_publisher(MarkerArray, f'/{members[0].name}/markers',
                                                     qos.VIEW_PUB)
        self.views = []
        for m in members:
            sc, kind = m.scenario, entry(m.kind)     # the vehicle's kind draws it
            ns = f'{m.name}/'
            view = _View(m.name if n > 1 else '', Decimator(self.marker_rate_hz) if n > 1
                         else self.dec)
            view.static = scene.mission_shapes(
                item_points(sc), [it.command for it in sc.mission], ns=f'{ns}mission',
                size=kind.view.mission_marker_m) if sc.mission else []
            view.body = kind.view.body(kind.load_params(sc.vehicle_file), f'{ns}vehicle')
            view.track = scene.Track(*self.track_args)
            view.path = Path()
            view.path.header.frame_id = self.frame
            view.pub_path = self.create_publisher(Path, f'/{ns}path', qos.VIEW_PUB)
            self.create_subscription(Odometry, f'/{ns}odom',
                                     lambda msg, view=view: self._on_odom(msg, view),
                                     qos.SENSOR_SUB)
            self.views.append(view)
        # one vehicle: its track, for the tests and tools that look at it
        self.track = self.views[0].track

    def _on_odom(self, msg: Odometry, view=None):
        view = view or self.views[0]
        pose = msg.pose.pose
        p, o = pose.position, pose.orientation
        t = time_ns(msg.header.stamp)
        if self.tf is not None:
            tr = TransformStamped()
            tr.header = msg.header
            tr.child_frame_id = msg.child_frame_id or 'base_link'
            set_vec3(tr.transform.translation, (p.x, p.y, p.z))
            tr.transform.rotation = o
            self.tf.sendTransform(tr)
        if view.track.add(t * 1e-9, (p.x, p.y, p.z)):
            ps = PoseStamped()
            ps.header = msg.header
            ps.pose = pose
            view.path.poses.append(ps)
            if len(view.path.poses) > view.track.points.maxlen:
                del view.path.poses[0]
        if not view.dec.due(t):
            return
        view.path.header.stamp = msg.header.stamp
        view.pub_path.publish(view.path)
        shapes = view.body((p.x, p.y, p.z), (o.w, o.x, o.y, o.z)) + view.static
        if view.name:
            shapes.append(scene.Shape(f'{view.name}/label', 0, 'text_view_facing',
                                      (p.x, p.y, p.z + 0.8), scale=(0.0, 0.0, 0.4),
                                      color=(1.0, 1.0, 1.0, 1.0), text=view.name))
        self._publish(shapes, msg.header.stamp)

    # --- a swarm -----------------------------------------------------------------------------
    def _init_swarm(self, files: SwarmFilesConfig):
        self.types = TypeTable.load(files.types_file)
        self.tracks = {}
        self.config_rejects = 0
        self._set_map(load_swarm_config(files.sim_config, self.types.boats, self.types.obstacles,
                                        MAX_BOATS)[0])
        self.create_subscription(SwarmState, 'state', self._on_swarm, qos.SENSOR_SUB)
        self.create_subscription(JsonData, 'config', self._on_config, qos.LATCHED)

    def _set_map(self, cfg):
        self.map = scene.swarm_map(cfg, self.types)
        self.static = scene.obstacle_shapes(self.map.obstacles_en, self.map.obstacle_radii) + [
            scene.bounds_shape(self.map.bounds_en)]
        self.tracks.clear()
        self._stale = True                  # markers of the old init are deleted first

    def _on_config(self, msg: JsonData):
        try:
            self._set_map(parse_swarm_config(json_object(msg.data), self.types.boats,
                                             self.types.obstacles, MAX_BOATS))
        except ValueError as exc:       # FieldError, a bad layout: the old map stays
            self.config_rejects += 1
            self.get_logger().warning(f'config not drawn ({self.config_rejects} so far): '
                                      f'{exc}', throttle_duration_sec=1.0)

    def _on_swarm(self, msg: SwarmState):
        t = time_ns(msg.header.stamp)
        n = min(len(msg.id), self.max_boats)
        for i in range(n):
            tr = self.tracks.get(msg.id[i])
            if tr is None:
                tr = self.tracks[msg.id[i]] = scene.Track(*self.track_args)
            tr.add(t * 1e-9, (msg.x_east_m[i], msg.y_north_m[i], 0.0))
        if not self.dec.due(t):
            return
        shapes = list(self.static)
        for i in range(n):
            bid = int(msg.id[i])
            q = q_ned_frd_to_enu_flu(euler_ned_to_quat(
                math.radians(msg.roll_deg[i]), math.radians(msg.pitch_deg[i]),
                math.radians(msg.yaw_deg[i])))
            color = scene.team_color(msg.team[i], msg.status[i] != 0)
            shapes += scene.boat_shapes(self.map.boat_lengths.get(bid, 5.0),
                                        (msg.x_east_m[i], msg.y_north_m[i], 0.0), q, 'boats', i,
                                        color, f'{bid} ({msg.health[i]:.0f})')
            shapes.append(scene.track_shape(self.tracks[msg.id[i]].xyz(), i, color))
        self._publish(shapes, msg.header.stamp)

    # --- common ------------------------------------------------------------------------------
    def _publish(self, shapes, stamp):
        arr = MarkerArray()
        if self._stale:                 # in the markers' frame and time, as every marker
            clear = Marker(action=Marker.DELETEALL)
            clear.header.frame_id, clear.header.stamp = self.frame, stamp
            arr.markers.append(clear)
            self._stale = False
        arr.markers += [to_marker(s, self.frame, stamp) for s in shapes]
        self.pub_markers.publish(arr)
        self.published += 1


class _View:
    """What is drawn of one vehicle: body, mission, track, path (publisher)."""

    def __init__(self, name: str, dec: Decimator):
        """name: the vehicle's namespace in a fleet, '' for the one vehicle."""
        self.name, self.dec = name, dec
        self.static, self.body, self.track, self.path, self.pub_path = [], None, None, None, None


def main(args=None):
    """Run viz_node."""
    run_node(VizNode, 'viz_node', args)


if __name__ == '__main__':
    main()
