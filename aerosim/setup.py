"""aerosim: ament_python package (ROS 2 nodes, pure simulation cores, bridges, runner)."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = 'aerosim'
PYTHON_PACKAGES = [
    'sim_core', 'sim_ros', 'sim_launch', 'sim_report', 'sim_bag', 'sim_viz', 'sim_dynamics',
    'sim_sensors', 'mavlink_bridge', 'imc_bridge', 'usv_bridge', 'sim_autopilot',
]

setup(
    name=PACKAGE,
    version='0.1.0',
    packages=find_packages(include=[p for name in PYTHON_PACKAGES for p in (name, name + '.*')]),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + PACKAGE]),
        ('share/' + PACKAGE, ['package.xml']),
        ('share/' + PACKAGE + '/launch', glob('launch/*.launch.py')),
        ('share/' + PACKAGE + '/config', glob('config/*.yaml') + glob('config/*.json')),
        ('share/' + PACKAGE + '/rviz', glob('rviz/*.rviz')),
        ('share/' + PACKAGE + '/config/scenarios', glob('config/scenarios/*.yaml')),
        ('share/' + PACKAGE + '/config/vehicles', glob('config/vehicles/*.yaml')),
        ('share/' + PACKAGE + '/config/boats', glob('config/boats/*.yaml')),
        ('share/' + PACKAGE + '/config/aircraft', glob('config/aircraft/*.yaml')),
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
            'dynamics_node = sim_dynamics.dynamics_node:main',
            'sensors_node = sim_sensors.sensors_node:main',
            'camera_node = sim_sensors.camera_node:main',
            'mavlink_bridge_node = mavlink_bridge.mavlink_bridge_node:main',
            'builtin_fc = mavlink_bridge.fc.fc_node:main',
            'hil_plant = mavlink_bridge.hil_plant:main',
            'flight_report = sim_report.flight_report:main',
            'usv_node = sim_dynamics.usv_node:main',
            'imc_bridge_node = imc_bridge.imc_bridge_node:main',
            'usv_swarm_node = sim_dynamics.usv_swarm_node:main',
            'usv_bridge_node = usv_bridge.usv_bridge_node:main',
            'recorder = sim_bag.recorder:main',
            'player = sim_bag.player:main',
            'viz_node = sim_viz.viz_node:main',
            'foxglove_node = sim_viz.foxglove_node:main',
            'summary_node = sim_report.summary_node:main',
            'plane_node = sim_dynamics.plane_node:main',
            'autopilot_node = sim_autopilot.autopilot_node:main',
            'plane_report = sim_report.plane_report:main',
            'plane_plant = mavlink_bridge.plane_plant:main',
        ],
    },
)
