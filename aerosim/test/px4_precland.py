"""PX4's precision landing: simulator_mavlink, landing_target_estimator, navigator's precland.

Part of the PX4 stand-in (px4_sitl.py), PX4-Autopilot v1.16.

Precision landing (a land item's `deck:`, NAV_LAND param2 = 2):
- the simulator link's LANDING_TARGET (handle_message_landing_target): position_valid 1 is
  dropped with "Only landing targets relative to captured images are supported"; else angle_x
  / angle_y become irlock_report pos_x / pos_y (tangents; distance, frame, time ignored);
- DISTANCE_SENSOR (publish_distance_topic): cm -> m; only orientation PITCH_270 (downward)
  feeds EKF2's terrain estimate (dist_bottom, valid while readings in [min, max] come within
  2 x EKF2's RNG_MAX_INTERVAL 0.2 s); signal_quality 1 means invalid;
- landing_target_estimator runs only when started (airframe 1011 or `landing_target_estimator
  start`: --landing-target-estimator here); it converts an irlock_report only with a valid
  dist_bottom: the ray (pos_x, pos_y, 1) turned by LTEST_SENS_ROT (2: yaw 90, body forward =
  -pos_y, right = pos_x) and the attitude, scaled to dist_bottom (LandingTargetEstimator.cpp);
- navigator's precland (precland.cpp): the target's position, no velocity feed-forward; the
  descent once within PLD_HACC_RAD for 2 s, then for good (DescendAboveTarget); the land
  detector on the ground speed under LNDMC_XY_VEL_MAX (MulticopterLandDetector.cpp). The FC core
  flies this with NavConfig's PX4 options (mavlink_bridge.fc.autopilot).
  Not reproduced: a real PX4 v1.16 does not take off from a deck that is already moving (its
  takeoff holds the point where it began; held level by the deck it demanded a 45 deg tilt,
  saturated two motors and stayed on the deck, checked by hand); this stand-in lifts off.
  config/scenarios/deck_landing_px4.yaml has the boat wait for the takeoff.
"""

import math

from mavlink_bridge.core.mav import mavlink


class PrecisionLanding:
    """Px4Sitl's precision landing: LANDING_TARGET and DISTANCE_SENSOR to the FC core.

    A mixin of Px4Sitl (px4_sitl.py), on its state: ap, params, plane, lte, range, now_us,
    counts, log.
    """

    # --- precision landing ---------------------------------------------------------------------
    def _nav_from_params(self):
        """The FC core's precision landing as PX4's parameters set it (module docstring)."""
        if self.plane:
            return
        nav = self.ap.nav
        nav.prec_velocity_ff = False
        nav.prec_dwell_s = 2.0
        nav.prec_radius_m = float(self.params['PLD_HACC_RAD'])
        nav.prec_radius_frac = 0.0
        nav.prec_search_s = float(self.params['PLD_SRCH_TOUT'])
        nav.prec_lost_s = float(self.params['PLD_BTOUT'])
        nav.land_xy_vel_max = float(self.params['LNDMC_XY_VEL_MAX'])

    def _distance(self, m):
        """DISTANCE_SENSOR: a downward reading in range is EKF2's terrain distance."""
        self.counts['distance_sensor'] += 1
        if m.orientation != mavlink.MAV_SENSOR_ROTATION_PITCH_270:
            return                          # not ROTATION_DOWNWARD_FACING: not for EKF2
        d = m.current_distance / 100.0
        ok = m.signal_quality != 1 and m.min_distance / 100.0 <= d <= m.max_distance / 100.0
        self.range = (self.now_us, d) if ok else None

    def _landing_target(self, m):
        """LANDING_TARGET -> irlock_report -> landing_target_estimator -> the FC core."""
        if m.position_valid:
            self.counts['landing_target_dropped'] += 1
            if self.counts['landing_target_dropped'] == 1:
                self.log.append('WARN Only landing targets relative to captured images are '
                                'supported')
            return
        if not self.lte:
            self.counts['irlock_unused'] += 1      # nobody subscribes irlock_report
            return
        if self.range is None or self.now_us - self.range[0] > 400_000:
            self.counts['irlock_no_dist_bottom'] += 1
            return
        R = self.ap.est.R                      # body FRD -> NED
        ray_frd = [-m.angle_y, m.angle_x, 1.0]  # LTEST_SENS_ROT 2 (yaw 90)
        if self.params['LTEST_SENS_ROT'] != 2 or not all(map(math.isfinite, ray_frd)):
            self.counts['irlock_refused'] += 1
            return
        ray_z = sum(float(R[2][k]) * ray_frd[k] for k in range(3))
        if abs(ray_z) < 1e-6:
            return
        dist_bottom = self.range[1] * float(R[2][2])   # EKF2's HAGL from a tilted range
        norm = math.sqrt(sum(x * x for x in ray_frd))
        self.counts['irlock'] += 1
        self.ap.tracker.measure(self.now_us * 1e-6, m.angle_x, m.angle_y,
                                dist_bottom * norm / ray_z, self.ap.est.position, R)
