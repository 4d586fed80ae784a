"""The PX4 stand-in's parameters and the mission feasibility rules it applies.

Parameters (src/modules/mavlink/mavlink_parameters.cpp): PARAM_SET for our system and our
component (or all) sets a known parameter whose MAV_PARAM_TYPE is the parameter's (INT32 6,
REAL32 9; values bytewise: an INT32 in the float's 4 bytes) and answers PARAM_VALUE; an
unknown name or another type is only logged on PX4's console ("unknown param", "param types
mismatch") and gets no answer. The table: PX4 v1.16's names, types and defaults
(build/px4_sitl_default/parameters.json) of the parameters the stand-in reads and of those
aerosim's parameter files set, with the airframe scripts' set-defaults where they differ:
10016_none_iris (quad) and 1030_gazebo-classic_plane with rc.fw_defaults (plane).

Feasibility (src/modules/navigator/MissionFeasibility/FeasibilityChecker.cpp), run on a new
mission; an infeasible one is stored but not valid, and MISSION_START is DENIED:
- MIS_TKO_LAND_REQ (checkTakeoffLandAvailable): 0 nothing; 1 a takeoff; 2 a landing; 3 both;
  4 both or neither;
- a landing is valid when it follows an item with a position (checkLandPatternValidity) and,
  for a fixed wing (checkFixedWindLandApproach), when that item (a WAYPOINT; LOITER_TO_ALT is
  not used here) is above the landing point and the slope between them is no steeper than
  tan(FW_LND_ANG + 0.1 deg); otherwise "the landing glide slope is steeper than the vehicle
  setting of {1}.{2} degrees" and what would do ("lower the entrance altitude {1} meters, or
  increase the landing approach distance {2} meters").
"""

import math
import struct

INT32, REAL32 = 6, 9
CMD_TAKEOFF, CMD_WAYPOINT, CMD_LAND, CMD_RTL = 22, 16, 21, 20

# name: (type, PX4 default); AIRFRAME overrides the defaults per airframe
PARAMS = {
    'MIS_TKO_LAND_REQ': (INT32, 0), 'MAV_HB_FORW_EN': (INT32, 1),
    'COM_DISARM_PRFLT': (REAL32, 10.0), 'COM_DL_LOSS_T': (REAL32, 10.0),
    # precision landing (config/px4/deck_landing.params): landing_target_estimator,
    # navigator's precland, the multicopter land detector
    'LTEST_MODE': (INT32, 0), 'LTEST_SENS_ROT': (INT32, 2), 'LNDMC_XY_VEL_MAX': (REAL32, 1.5),
    'PLD_HACC_RAD': (REAL32, 0.2), 'PLD_SRCH_TOUT': (REAL32, 10.0), 'PLD_BTOUT': (REAL32, 5.0),
    # those of config/px4/c172r.params
    'NAV_DLL_ACT': (6, 0),
    'COM_DISARM_LAND': (9, 2.0),
    'NAV_FW_ALT_RAD': (9, 10.0),
    'NAV_FW_ALTL_RAD': (9, 5.0),
    'NAV_LOITER_RAD': (9, 80.0),
    'FW_AIRSPD_STALL': (9, 7.0),
    'FW_AIRSPD_MIN': (9, 10.0),
    'FW_AIRSPD_TRIM': (9, 15.0),
    'FW_AIRSPD_MAX': (9, 20.0),
    'FW_TKO_AIRSPD': (9, -1.0),
    'RWTO_ROT_AIRSPD': (9, -1.0),
    'FW_LND_AIRSPD': (9, -1.0),
    'FW_THR_MAX': (9, 1.0),
    'FW_THR_MIN': (9, 0.0),
    'FW_THR_IDLE': (9, 0.0),
    'FW_THR_TRIM': (9, 0.6),
    'FW_THR_ASPD_MIN': (9, 0.0),
    'FW_THR_ASPD_MAX': (9, 0.0),
    'FW_T_CLMB_MAX': (9, 5.0),
    'FW_T_SINK_MIN': (9, 2.0),
    'FW_T_SINK_MAX': (9, 5.0),
    'FW_T_CLMB_R_SP': (9, 3.0),
    'FW_T_SINK_R_SP': (9, 2.0),
    'FW_T_ALT_TC': (9, 5.0),
    'FW_T_TAS_TC': (9, 5.0),
    'FW_T_VERT_ACC': (9, 7.0),
    'FW_T_HRATE_FF': (9, 0.3),
    'FW_LND_THRTC_SC': (9, 1.0),
    'FW_PSP_OFF': (9, 0.0),
    'FW_P_LIM_MAX': (9, 30.0),
    'FW_P_LIM_MIN': (9, -30.0),
    'FW_R_LIM': (9, 50.0),
    'FW_R_TC': (9, 0.4),
    'FW_R_RMAX': (9, 70.0),
    'FW_PN_R_SLEW_MAX': (9, 90.0),
    'FW_RR_FF': (9, 0.5),
    'FW_RR_P': (9, 0.05),
    'FW_RR_I': (9, 0.1),
    'FW_RR_IMAX': (9, 0.2),
    'FW_P_TC': (9, 0.4),
    'FW_P_RMAX_POS': (9, 60.0),
    'FW_P_RMAX_NEG': (9, 60.0),
    'FW_PR_FF': (9, 0.5),
    'FW_PR_P': (9, 0.08),
    'FW_PR_I': (9, 0.1),
    'FW_PR_IMAX': (9, 0.4),
    'FW_YR_FF': (9, 0.3),
    'FW_YR_P': (9, 0.05),
    'FW_YR_I': (9, 0.1),
    'TRIM_PITCH': (9, 0.0),
    'FW_DTRIM_P_VMIN': (9, 0.0),
    'FW_DTRIM_P_VMAX': (9, 0.0),
    'NPFG_PERIOD': (9, 10.0),
    'CA_SV_CS4_TRIM': (9, 0.0),
    'CA_SV_CS4_FLAP': (9, 0.0),
    'CA_SV_CS5_TRIM': (9, 0.0),
    'CA_SV_CS5_FLAP': (9, 0.0),
    'PWM_MAIN_FUNC10': (6, 0),
    'FW_W_EN': (6, 0),
    'FW_W_RMAX': (9, 30.0),
    'FW_WR_FF': (9, 0.2),
    'FW_WR_P': (9, 0.5),
    'FW_WR_I': (9, 0.1),
    'FW_FLAPS_TO_SCL': (9, 0.0),
    'RWTO_PSP': (9, 0.0),
    'RWTO_ROT_TIME': (9, 1.0),
    'FW_TKO_PITCH_MIN': (9, 10.0),
    'FW_FLAPS_LND_SCL': (9, 1.0),
    'FW_LND_USETER': (6, 1),
    'FW_LND_ANG': (9, 5.0),
    'FW_LND_FLALT': (9, 0.5),
    'FW_LND_FL_TIME': (9, 1.0),
    'FW_LND_FL_SINK': (9, 0.25),
    'FW_LND_FL_PMIN': (9, 2.5),
    'FW_LND_FL_PMAX': (9, 15.0),
    'FW_LND_TD_TIME': (9, -1.0),
    'FW_WING_SPAN': (9, 3.0),
    'FW_WING_HEIGHT': (9, 0.5),
    'LNDFW_VEL_XY_MAX': (9, 5.0),
    'LNDFW_AIRSPD_MAX': (9, 6.0),
    'LNDFW_VEL_Z_MAX': (9, 1.0),
    'LNDFW_TRIG_TIME': (9, 2.0),
    'EKF2_GPS_CHECK': (6, 1023),
}
AIRFRAME = {
    'quad': {},
    'plane': {'NAV_DLL_ACT': 2, 'MIS_TKO_LAND_REQ': 2, 'COM_DISARM_PRFLT': -1.0,
              'FW_LND_ANG': 8.0, 'FW_THR_MAX': 0.6},
}


def to_wire(value, ptype: int) -> float:
    """A value as PARAM_VALUE carries it (an INT32 bytewise in the float)."""
    if ptype == INT32:
        return struct.unpack('<f', struct.pack('<i', int(value)))[0]
    return float(value)


def from_wire(value: float, ptype: int):
    """PARAM_SET's float field as the parameter's value."""
    if ptype == INT32:
        return struct.unpack('<i', struct.pack('<f', value))[0]
    return value


class Params:
    """The parameter store of one PX4 instance."""

    def __init__(self, airframe: str):
        """PX4's defaults with the airframe's set-defaults."""
        self.values = {n: v for n, (_, v) in PARAMS.items()}
        self.values.update(AIRFRAME[airframe])
        self.sets = 0
        self.refused = []

    def __getitem__(self, name):
        """A parameter's value."""
        return self.values[name]

    def set(self, name: str, wire_value: float, ptype: int):
        """PARAM_SET: the new value, or None (unknown or the wrong type: no answer)."""
        known = PARAMS.get(name)
        if known is None or known[0] != ptype:
            self.refused.append(name)
            return None
        self.values[name] = from_wire(wire_value, ptype)
        self.sets += 1
        return self.values[name]


def _dist(a, b) -> float:
    """Great-circle distance of two items' positions (degE7) [m] (PX4's get_distance_...)."""
    la1, lo1, la2, lo2 = (math.radians(v * 1e-7) for v in (a.x, a.y, b.x, b.y))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * \
        math.sin((lo2 - lo1) / 2) ** 2
    return 2.0 * 6371000.0 * math.asin(math.sqrt(min(1.0, h)))


def feasibility(items, params: Params, fixed_wing: bool):
    """(valid, [(event name, args)]) of a mission (Item list), as PX4's FeasibilityChecker."""
    said = []
    has_takeoff = any(i.command == CMD_TAKEOFF for i in items)
    landing_valid = False
    for k, it in enumerate(items):
        if it.command != CMD_LAND:
            continue
        if k == 0:
            return False, [('navigator_mis_land_missing', ())]
        prev = items[k - 1]
        if fixed_wing and prev.command == CMD_WAYPOINT:
            rel = prev.z - it.z          # both relative to home here
            if rel <= 0.0:
                return False, [('navigator_mis_approach_wp_below_land', ())]
            slope = rel / max(_dist(prev, it), 1e-3)
            ang = params['FW_LND_ANG']
            limit = math.tan(math.radians(ang + 0.1))
            if slope > limit:
                said.append(('navigator_mis_glide_slope_too_steep',
                             (int(ang), int((ang - math.floor(ang)) * 10))))
                said.append(('navigator_mis_correct_glide_slope',
                             (int(limit * _dist(prev, it)), math.ceil(rel / limit))))
                return False, said
        landing_valid = True
    req = params['MIS_TKO_LAND_REQ']
    ok = {0: True, 1: has_takeoff, 2: landing_valid, 3: has_takeoff and landing_valid,
          4: has_takeoff == landing_valid}.get(req, True)
    if not ok and req == 2:
        said.append(('navigator_mis_land_missing', ()))
    return ok, said
