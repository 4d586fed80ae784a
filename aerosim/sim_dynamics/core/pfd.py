"""PrimaryFlightDisplayData from JSBSim's properties and the autopilot's target (pure).

The fields as seed 002 defines them (AeroSim's primary_flight_display_controller FMU):
airspeed_kts = velocities/vc-kts, true_airspeed_kts = velocities/vtrue-kts, altitude_ft =
position/h-sl-ft read through the altimeter setting, vertical_speed_fpm = velocities/h-dot-fps
* 60, pitch_deg/roll_deg = attitude/pitch-rad, roll-rad in degrees, side_slip_fps2 =
accelerations/vdot-ft_sec2, heading_deg = attitude/heading-true-rad in degrees. HSI in GPS
mode: the course from the previous to the active waypoint and the cross-track deviation,
5 NM = 12 deg, positive right of the course; without an active waypoint both are 0.

The altimeter: 1000 ft per inHg away from 29.92, the rule of thumb AeroSim uses, with the
sign of a Kollsman window (a higher setting reads higher). AeroSim's FMU adds
(29.92 - setting) * 1000 ft, the opposite sign; at the standard 29.92 both read h-sl-ft.
"""

import math
from typing import NamedTuple, Tuple

from sim_core.geodesy import bearing_deg, course_deviation_m
from sim_core.units import NM_M

STANDARD_INHG = 29.92
FT_PER_INHG = 1000.0
# HSI deviation scale: 5 nautical miles = 12 deg (AeroSim's COURSE_DEVIATION_METERS_TO_DEG).
DEVIATION_DEG_PER_M = 12.0 / 5.0 / NM_M
HSI_MODES = {'gps': 0, 'vor1': 1, 'vor2': 2}


class Pfd(NamedTuple):
    """PrimaryFlightDisplayData's fields (units in the names)."""

    airspeed_kts: float
    true_airspeed_kts: float
    altitude_ft: float
    target_altitude_ft: float
    altimeter_pressure_setting_inhg: float
    vertical_speed_fpm: float
    pitch_deg: float
    roll_deg: float
    side_slip_fps2: float
    heading_deg: float
    hsi_course_select_heading_deg: float
    hsi_course_deviation_deg: float
    hsi_mode: int


class FlightDisplay:
    """Computes the PFD each step; remembers the previous target waypoint for the HSI."""

    def __init__(self, altimeter_inhg: float = STANDARD_INHG, hsi_mode: str = 'gps'):
        """altimeter_inhg: the altimeter setting [inHg]; hsi_mode: gps, vor1 or vor2."""
        self.altimeter_inhg = altimeter_inhg
        self.hsi_mode = HSI_MODES[hsi_mode]
        self._cur: Tuple[float, float] = (math.nan, math.nan)    # active target (lat, lon)
        self._prev: Tuple[float, float] = (math.nan, math.nan)   # the course's start

    def update(self, a, target_altitude_ft: float, wp_active: bool, wp_lat: float,
               wp_lon: float) -> Pfd:
        """The PFD for air data a (plane.AirData) and the autopilot's target."""
        here = (a.lat_deg, a.lon_deg)
        course = deviation = 0.0
        if wp_active and math.isfinite(wp_lat) and math.isfinite(wp_lon):
            wp = (wp_lat, wp_lon)
            if not math.isfinite(self._cur[0]):
                self._cur = here
            if wp != self._cur:
                self._prev, self._cur = self._cur, wp
            (lat0, lon0), (lat1, lon1) = self._prev, self._cur
            course = bearing_deg(lat0, lon0, lat1, lon1)
            deviation = course_deviation_m(lat0, lon0, lat1, lon1, a.lat_deg, a.lon_deg) * \
                DEVIATION_DEG_PER_M
        else:
            self._cur = self._prev = here
        alt = a.h_sl_ft + (self.altimeter_inhg - STANDARD_INHG) * FT_PER_INHG
        return Pfd(a.vc_kts, a.vtrue_kts, alt, target_altitude_ft, self.altimeter_inhg,
                   a.h_dot_fps * 60.0, math.degrees(a.pitch_rad), math.degrees(a.roll_rad),
                   a.vdot_ft_sec2, math.degrees(a.heading_true_rad) % 360.0, course, deviation,
                   self.hsi_mode)
