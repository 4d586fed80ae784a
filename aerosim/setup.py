"""aerosim: ament_python package (ROS 2 nodes, pure simulation cores, bridges, runner)."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = 'aerosim'
PYTHON_PACKAGES = [
    'sim_core', 'sim_ros', 'sim_launch', 'sim_report', 'sim_bag', 'sim_viz', 'sim_dynamics',
    'sim_sensors', 'mavlink_bridge', 'imc_bridge', 'usv_bridge', 'sim_autopilot', 'sim_world',
    'kinds',
]
# Each kind folder's data, installed with its package (sim_core.kinds finds kinds/ beside
# sim_core): a new kind needs no line here
KIND_DATA = ['*/kind.yaml', '*/params/*.yaml', '*/scenarios/*.yaml']

setup(
    name=PACKAGE,
    version='0.1.0',
    packages=find_packages(include=[p for name in PYTHON_PACKAGES for p in (name, name + '.*')]),
    package_data={'kinds': KIND_DATA},
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + PACKAGE]),
        ('share/' + PACKAGE, ['package.xml']),
        ('share/' + PACKAGE + '/launch', glob('launch/*.launch.py')),
        ('share/' + PACKAGE + '/config', glob('config/*.yaml') + glob('config/*.json')),
        ('share/' + PACKAGE + '/rviz', glob('rviz/*.rviz')),
        ('share/' + PACKAGE + '/config/scenarios', glob('config/scenarios/*.yaml')),
        ('share/' + PACKAGE + '/config/dune', glob('config/dune/*.ini')),
        ('share/' + PACKAGE + '/config/px4', glob('config/px4/*.params')),
    ],
    install_requires=['setuptools'],
    zip_safe=True,
    maintainer='aerosim developers',
    maintainer_email='dev@aerosim.invalid',
    description='Lightweight ROS 2 vehicle simulator for HIL/SIL testing.',
    license='Apache-2.0',
    tests_require=['pytest'],
    entry_points={
        'console_scripts': [
            'aerosim = sim_launch.cli:main',
            'sensors_node = sim_launch.entry:sensors_node',
            'camera_node = sim_launch.entry:camera_node',
            'mavlink_bridge_node = sim_launch.entry:mavlink_bridge_node',
            'builtin_fc = sim_launch.entry:builtin_fc',
            'imc_bridge_node = sim_launch.entry:imc_bridge_node',
            'usv_swarm_node = sim_launch.entry:usv_swarm_node',
            'usv_bridge_node = sim_launch.entry:usv_bridge_node',
            'recorder = sim_launch.entry:recorder',
            'player = sim_launch.entry:player',
            'viz_node = sim_launch.entry:viz_node',
            'foxglove_node = sim_launch.entry:foxglove_node',
            'world_node = sim_launch.entry:world_node',
            'world_plant = sim_launch.entry:world_plant',
        ],
    },
)
