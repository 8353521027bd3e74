"""Velocity tuning (seed 000, Sec. 5.3.3): a virtual force on the COM through the stance leg.

Sagittally F = k_V (Vd - V). Laterally a PD drives the COM towards a target
that moves from its foot-strike value to the desired offset at the predicted
next foot strike (coros-walking.md, Sec. 4 fixes the missing gains).
"""

from __future__ import annotations

from dataclasses import dataclass

from strider.control.fastmath import clamp


@dataclass(frozen=True)
class VelocityTuningParams:
    k_sagittal: float = 100.0      # k_V, N s/m (seed 000, Sec. 5.3.3 / 5.6)
    lateral_kp: float = 20.0       # 1/s^2, times body mass (coros-walking.md, Sec. 4)
    lateral_kd: float = 9.0        # 1/s, times body mass (coros-walking.md, Sec. 4)
    lateral_limit: float = 100.0   # N (coros-walking.md, Sec. 4)
    sagittal_limit: float = 200.0  # N; keeps a hard push from asking for ankle torques the foot cannot hold
    walk_lateral_kp: float = 0.0   # 1/s^2 times mass, while walking (lateral balance is left to foot placement)
    walk_lateral_kd: float = 3.0   # 1/s times mass, while walking


def sagittal_force(desired_speed: float, speed: float, params: VelocityTuningParams) -> float:
    return float(clamp(params.k_sagittal * (desired_speed - speed), -params.sagittal_limit, params.sagittal_limit))


def com_pd_force(mass: float, offset_error: float, velocity: float, kp: float, kd: float, limit: float) -> float:
    """A mass-scaled PD force pulling the COM towards a target offset, clamped to ``limit``."""
    return float(clamp(mass * (kp * offset_error - kd * velocity), -limit, limit))


def lateral_force(mass: float, offset_error: float, lateral_speed: float, params: VelocityTuningParams,
                  walking: bool = False) -> float:
    kp, kd = (params.walk_lateral_kp, params.walk_lateral_kd) if walking else (params.lateral_kp, params.lateral_kd)
    return com_pd_force(mass, offset_error, lateral_speed, kp, kd, params.lateral_limit)


def standing_sagittal_force(mass: float, offset_error: float, speed: float, params: VelocityTuningParams) -> float:
    """Standing (seed 000, Sec. 5.5.1): the same COM PD as laterally, towards the middle of the feet."""
    return com_pd_force(mass, offset_error, speed, params.lateral_kp, params.lateral_kd, params.sagittal_limit)


def lateral_target(strike_offset: float, final_offset: float, phase: float) -> float:
    """COM lateral target moving linearly from its foot-strike value to ``final_offset``."""
    phase = min(max(phase, 0.0), 1.0)
    return (1.0 - phase) * strike_offset + phase * final_offset

