"""pymavlink, MAVLink 2, common dialect: the one import of the wire format (pure, no rclpy)."""

import os

os.environ['MAVLINK20'] = '1'   # before any pymavlink import: MAVLink 2 framing

from pymavlink.dialects.v20 import common as mavlink  # noqa: E402

# HIL_SENSOR fields_updated groups (HIL_SENSOR_UPDATED_FLAGS).
ACCEL = (mavlink.HIL_SENSOR_UPDATED_XACC | mavlink.HIL_SENSOR_UPDATED_YACC
         | mavlink.HIL_SENSOR_UPDATED_ZACC)                                  # 0x7
GYRO = (mavlink.HIL_SENSOR_UPDATED_XGYRO | mavlink.HIL_SENSOR_UPDATED_YGYRO
        | mavlink.HIL_SENSOR_UPDATED_ZGYRO)                                  # 0x38
MAG = (mavlink.HIL_SENSOR_UPDATED_XMAG | mavlink.HIL_SENSOR_UPDATED_YMAG
       | mavlink.HIL_SENSOR_UPDATED_ZMAG)                                    # 0x1C0
BARO = (mavlink.HIL_SENSOR_UPDATED_ABS_PRESSURE | mavlink.HIL_SENSOR_UPDATED_PRESSURE_ALT
        | mavlink.HIL_SENSOR_UPDATED_TEMPERATURE)                            # 0x1A00

DIFF_PRESS = mavlink.HIL_SENSOR_UPDATED_DIFF_PRESSURE                       # 0x400

ARMED_GUIDED = mavlink.MAV_MODE_FLAG_SAFETY_ARMED | mavlink.MAV_MODE_FLAG_GUIDED_ENABLED  # 136


def new_mav(sysid: int, compid: int) -> 'mavlink.MAVLink':
    """A MAVLink 2 encoder/parser with our ids; robust parsing returns bad data, never raises."""
    mav = mavlink.MAVLink(None, srcSystem=sysid, srcComponent=compid)
    mav.robust_parsing = True
    return mav


def pack(mav, msg) -> bytes:
    """Serialize msg as a MAVLink 2 frame with mav's ids and sequence, then advance it.

    pymavlink advances the sequence in MAVLink.send() only; msg.pack() alone would stamp
    every frame 0 (a receiver then counts 255 of 256 frames lost).
    """
    data = msg.pack(mav)
    mav.seq = (mav.seq + 1) % 256
    return data


def reset_parser(mav) -> None:
    """Drop any partial frame buffered in mav's parser (each UDP datagram stands alone)."""
    mav.buf = bytearray()
    mav.buf_index = 0
    mav.expected_length = mavlink.HEADER_LEN_V1 + 2
    mav.have_prefix_error = False
