"""Where aerosim's config files live: the source tree, or share/aerosim/config when installed."""

from pathlib import Path
from typing import Optional

from sim_core.errors import ConfigError

CONFIG_DIR = Path(__file__).resolve().parent.parent / 'config'


def config_dirs():
    """Config folders to search: the source tree's, then the installed share/aerosim/config."""
    dirs = [CONFIG_DIR] if CONFIG_DIR.is_dir() else []
    try:
        from ament_index_python.packages import get_package_share_directory
        dirs.append(Path(get_package_share_directory('aerosim')) / 'config')
    except Exception:  # noqa: BLE001 - no ament index entry (pip install): source tree only
        pass
    return dirs


def resolve_config_path(name: str, base_dir: Optional[Path] = None, subdir: str = '') -> Path:
    """Find a config file: as given, relative to base_dir, or in <config>/subdir (.yaml optional).

    The first match wins; raises ConfigError naming every folder searched.
    """
    if not isinstance(name, str) or not name or '\x00' in name or len(name) > 4096:
        raise ConfigError(f'{subdir or "config"}: {str(name)[:80]!r} is not a file name')
    cands = [Path(name)]
    if base_dir is not None:
        cands.append(Path(base_dir) / name)
    for d in config_dirs():
        cands += [d / subdir / name, d / subdir / f'{name}.yaml']
    for cand in cands:
        try:
            if cand.is_file():
                return cand.resolve()
        except OSError:         # a component longer than the file system takes, ...
            continue
    where = ', '.join(str(d / subdir) for d in config_dirs())
    raise ConfigError(f'{subdir or "config"}: file {name!r} not found (looked in '
                      f'{base_dir or "."} and {where})')


def resolve_package_path(name: str, folder: str) -> Path:
    """A package file: as given, or <package>/<folder>/name (source tree, then installed share)."""
    cands = [Path(name), CONFIG_DIR.parent / folder / name]
    try:
        from ament_index_python.packages import get_package_share_directory
        cands.append(Path(get_package_share_directory('aerosim')) / folder / name)
    except Exception:  # noqa: BLE001 - no ament index entry (pip install): source tree only
        pass
    for cand in cands:
        if cand.is_file():
            return cand.resolve()
    raise ConfigError(f'{folder}: file {name!r} not found (looked in '
                      f'{", ".join(str(c.parent) for c in cands)})')


def read_yaml(path, what: str):
    """The YAML document in path (a file of what: 'scenario', 'boat type', ...).

    Anything that keeps it from being read as YAML (missing, unreadable, not UTF-8, not YAML,
    nested too deep) is a ConfigError naming the file.
    """
    import yaml
    try:
        return yaml.safe_load(Path(path).read_text(encoding='utf-8'))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError) as exc:
        raise ConfigError(f'{path}: cannot read {what}: {exc}') from exc


def read_text(path, what: str, max_bytes: int = 1 << 20) -> str:
    """A UTF-8 text file of what, at most max_bytes; ConfigError naming the file otherwise."""
    try:
        with open(path, 'rb') as f:
            raw = f.read(max_bytes + 1)
    except OSError as exc:
        raise ConfigError(f'{path}: cannot read {what}: {exc}') from exc
    if len(raw) > max_bytes:
        raise ConfigError(f'{path}: {what} larger than {max_bytes} bytes')
    try:
        return raw.decode('utf-8')
    except UnicodeDecodeError as exc:
        raise ConfigError(f'{path}: {what} is not UTF-8 text: {exc}') from exc
