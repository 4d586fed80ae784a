"""aerosim sim_bag: rosbag2 record and replay (rosbags library)."""
