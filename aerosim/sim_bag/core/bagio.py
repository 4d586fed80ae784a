"""rosbag2 directories through the `rosbags` library: types, topic selection, writing, reading.

No rclpy here. The type store is built from the .msg files this install has (every
share/<pkg>/msg/*.msg under AMENT_PREFIX_PATH: the ROS wheels and our colcon-built
aerosim_msgs), so the definitions and RIHS01 hashes written into a bag are the ones the
publishers use, custom types included; `ros2 bag info` / `ros2 bag play` on a real ROS install
read them without aerosim installed.
"""

from dataclasses import dataclass, field
import os
from pathlib import Path
import re
from typing import Any, Dict, Iterator, List, Literal, Optional, Sequence, Tuple

from rosbags.interfaces import (
    Qos,
    QosDurability,
    QosHistory,
    QosLiveliness,
    QosReliability,
    QosTime,
)
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from sim_core.errors import ConfigError

STORAGES = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}
BAG_VERSION: Literal[9] = 9                       # rosbag2 metadata version of Jazzy/Kilted
DEFAULT_EXCLUDE = r'^/(rosout|parameter_events)$'   # ros2 bag records these; we don't by default

_STORE = None


def msg_files(prefixes: Optional[Sequence[str]] = None) -> Dict[str, Path]:
    """Every installed message definition: {'pkg/msg/Name': path}; earlier prefixes win."""
    if prefixes is None:
        prefixes = [p for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
    out: Dict[str, Path] = {}
    for pre in prefixes:
        for f in sorted(Path(pre, 'share').glob('*/msg/*.msg')):
            out.setdefault(f'{f.parent.parent.name}/msg/{f.stem}', f)
    return out


def installed_typestore():
    """A rosbags Typestore with every installed message type (built once per process).

    A .msg file rosbags cannot parse is skipped (its type, if used, then fails by name in
    msgdef()); a process that finds no installed definitions falls back to rosbags' own Kilted
    store.
    """
    global _STORE
    if _STORE is None:
        files = msg_files()
        store = get_typestore(Stores.EMPTY if files else Stores.ROS2_KILTED)
        types = {}
        for name, path in files.items():
            try:
                types.update(get_types_from_msg(path.read_text(), name))
            except Exception:  # noqa: BLE001 - an unparsable definition only loses that type
                continue
        store.register(types)
        _STORE = store
    return _STORE


def msgdef(msgtype: str) -> Tuple[str, str]:
    """(concatenated ros2msg definition, RIHS01 hash) of msgtype, as rosbag2 stores them."""
    store = installed_typestore()
    if msgtype not in store.fielddefs:
        raise ConfigError(f'message type {msgtype!r}: no definition installed (is its package '
                          'sourced?)')
    text, _ = store.generate_msgdef(msgtype, ros_version=2)
    return text, store.hash_rihs01(msgtype)


def storage_plugin(name: str) -> StoragePlugin:
    """'mcap' | 'sqlite3' -> StoragePlugin; a clear error otherwise."""
    try:
        return STORAGES[name]
    except KeyError:
        raise ConfigError(f"storage: 'mcap' or 'sqlite3', got {name!r}") from None


@dataclass
class TopicFilter:
    """Which topics to take: exact names, an include regex, an exclude regex.

    No names and no regex: every topic. A topic named exactly is always taken; the others
    must match the include regex (if any) and not the exclude regex.
    """

    names: Tuple[str, ...] = ()
    regex: str = ''
    exclude: str = DEFAULT_EXCLUDE
    _inc: Optional[re.Pattern] = field(default=None, repr=False)
    _exc: Optional[re.Pattern] = field(default=None, repr=False)

    def __post_init__(self):
        """Compile the expressions; ConfigError naming the bad one."""
        for n in self.names:
            if not n.startswith('/'):
                raise ConfigError(f'topics: absolute names expected, got {n!r}')
        try:
            self._inc = re.compile(self.regex) if self.regex else None
            self._exc = re.compile(self.exclude) if self.exclude else None
        except re.error as exc:
            raise ConfigError(f'topic regex: {exc}') from None

    def takes(self, topic: str) -> bool:
        """True if topic is selected."""
        if topic in self.names:
            return True
        if self._exc is not None and self._exc.search(topic):
            return False
        if self._inc is not None:
            return self._inc.search(topic) is not None
        return not self.names


def qos_to_bag(reliability: int, durability: int, depth: int) -> Qos:
    """A publisher's QoS (rmw enum values, shared by rclpy and rosbags) as a bag QoS entry."""
    zero = QosTime(0, 0)
    return Qos(QosHistory.KEEP_LAST, int(depth), QosReliability(int(reliability)),
               QosDurability(int(durability)), zero, zero, QosLiveliness.AUTOMATIC, zero, False)


class BagWriter:
    """A rosbag2 directory being written: topics are added as they are discovered.

    write() hands the bytes to rosbags at once (no buffering of ours): a message written is in
    the bag once close() returns, whatever stops the recorder afterwards.
    """

    def __init__(self, path, storage: str = 'mcap'):
        """Create the bag directory path (must not exist)."""
        self.path = Path(path)
        if self.path.exists():
            raise ConfigError(f'output: {self.path} exists; give a new bag directory')
        self.path.parent.mkdir(parents=True, exist_ok=True)
        plugin = storage_plugin(storage)
        self.writer = Writer(self.path, version=BAG_VERSION, storage_plugin=plugin)
        self.writer.open()
        self.connections: Dict[str, Any] = {}
        self.counts: Dict[str, int] = {}
        self.closed = False

    def add_topic(self, topic: str, msgtype: str, offered_qos: Sequence[Qos] = ()) -> None:
        """Register topic with its type definition (ConfigError if the type is unknown)."""
        if topic in self.connections:
            return
        text, rihs01 = msgdef(msgtype)
        self.connections[topic] = self.writer.add_connection(
            topic, msgtype, msgdef=text, rihs01=rihs01, offered_qos_profiles=list(offered_qos))
        self.counts[topic] = 0

    def write(self, topic: str, t_ns: int, data: bytes) -> None:
        """Append one serialized (CDR) message received at t_ns."""
        self.writer.write(self.connections[topic], int(t_ns), data)
        self.counts[topic] += 1

    def total(self) -> int:
        """Messages written so far."""
        return sum(self.counts.values())

    def close(self) -> None:
        """Finish the storage file and write metadata.yaml (idempotent).

        rosbags names itself as the bag's `ros_distro`; metadata.yaml (what `ros2 bag info`
        and rosbag2's reader show) gets the distribution the recorder runs under instead.
        """
        if not self.closed:
            self.closed = True
            self.writer.close()
            meta = self.path / 'metadata.yaml'
            text = meta.read_text()
            fixed = re.sub(r'^(\s*ros_distro:) rosbags$', rf'\1 {ros_distro()}', text,
                           flags=re.MULTILINE)
            if fixed != text:
                tmp = meta.with_suffix('.yaml.tmp')
                tmp.write_text(fixed)
                tmp.replace(meta)


def ros_distro() -> str:
    """The ROS 2 distribution this process runs under (ROS_DISTRO: setup.bash, env.sh).

    A name (letters, digits, '-', '_'), else 'unknown': the value goes into metadata.yaml.
    """
    name = os.environ.get('ROS_DISTRO', '')
    return name if re.fullmatch(r'[A-Za-z0-9_-]{1,32}', name) else 'unknown'


@dataclass(frozen=True)
class BagTopic:
    """A topic of a bag: name, type, message count, offered QoS."""

    name: str
    msgtype: str
    count: int
    qos: Tuple[Qos, ...]


def open_reader(path) -> Reader:
    """An open rosbags Reader of a rosbag2 directory; ConfigError if it is not one."""
    try:
        reader = Reader(Path(path))
        reader.open()
    except Exception as exc:  # noqa: BLE001 - rosbags raises several kinds; all mean "no bag"
        raise ConfigError(f'bag {path}: cannot open ({exc})') from None
    return reader


def bag_topics(reader: Reader) -> List[BagTopic]:
    """The topics of an open bag."""
    return [BagTopic(c.topic, c.msgtype, c.msgcount,
                     tuple(getattr(c.ext, 'offered_qos_profiles', ())))   # rosbag1: none
            for c in reader.connections]


def bag_messages(reader: Reader, select: TopicFilter) -> Iterator[Tuple[str, int, bytes]]:
    """(topic, t_ns, cdr bytes) of the selected topics in timestamp order."""
    conns = [c for c in reader.connections if select.takes(c.topic)]
    if not conns:
        return
    for conn, t_ns, data in reader.messages(connections=conns):
        yield conn.topic, t_ns, data
