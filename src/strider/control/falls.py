"""Fall detection: one shared definition for every controller and benchmark.

A character has fallen when a body other than its feet and toes touches the
ground or an obstacle, or its torso tilts more than ``max_tilt`` from
vertical, or its root sinks below ``min_height_fraction`` of its standing
height (coros-walking.md, Sec. 5: "a non-foot geom touching ground, or pelvis
below 0.5x standing height").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strider.control.fastmath import clamp


@dataclass(frozen=True)
class FallCriteria:
    max_tilt: float = 1.0              # rad, torso-to-vertical (torres-skills.md uses a 1.0 rad cone)
    min_height_fraction: float = 0.5   # of standing root height (coros-walking.md, Sec. 5)


def tilt(up_axis: np.ndarray) -> float:
    """Angle between a body's up axis (world) and vertical."""
    # np.arccos, not math.acos: the two round differently, and fall times must not move.
    return float(np.arccos(clamp(up_axis[2], -1.0, 1.0)))


def has_fallen(non_foot_contact: bool, torso_up: np.ndarray, root_height: float, standing_height: float,
               criteria: FallCriteria = FallCriteria()) -> bool:
    return (non_foot_contact or tilt(torso_up) > criteria.max_tilt
            or root_height < criteria.min_height_fraction * standing_height)
