"""A camera that frames the character, standing or on the ground.

A camera fixed at standing height beside the centre of mass leaves a body that rolls, falls or lies on the
ground as a thin strip near the bottom of the frame. This one looks at the middle of the character's bounding
box from the side (along +y, as the model's follow camera does), backs off just far enough for the box to fill
``fill`` of the frame, and rises to look down on a body as it gets flatter. Its settings glide from frame to
frame, so a swinging arm does not shake the view.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FramingParams:
    fill: float = 0.75                  # share of the frame's height (or width) the character's box takes
    limb_margin: float = 0.15           # m added around body centres, for the limbs' thickness
    min_distance: float = 2.0           # m: never closer, so a crouch does not zoom in on the pelvis
    max_distance: float = 12.0          # m
    standing_elevation: float = -8.0    # deg: nearly level for an upright body
    lying_elevation: float = -30.0      # deg: from above for a body on the ground
    standing_height: float = 1.5        # m of vertical extent counted as upright
    lying_height: float = 0.4           # m of vertical extent counted as lying
    azimuth: float = 90.0               # deg: looking along +y, the side view of a character walking along +x
    glide: float = 0.2                  # share of the way to the new setting taken per frame


@dataclass
class CameraPose:
    lookat: np.ndarray
    distance: float
    elevation: float


def frame_points(points: np.ndarray, fovy_deg: float, aspect: float, params: FramingParams) -> CameraPose:
    """The camera pose that frames ``points`` (N x 3, world) seen from the side."""
    lo = points.min(axis=0) - params.limb_margin
    hi = points.max(axis=0) + params.limb_margin
    half_fov = math.radians(fovy_deg) / 2.0
    tall, wide = hi[2] - lo[2], hi[0] - lo[0]
    needed = max(tall / 2.0 / math.tan(half_fov), wide / 2.0 / (math.tan(half_fov) * aspect)) / params.fill
    distance = min(max(needed, params.min_distance), params.max_distance)
    upright = min(max((tall - params.lying_height) / (params.standing_height - params.lying_height), 0.0), 1.0)
    elevation = params.lying_elevation + upright * (params.standing_elevation - params.lying_elevation)
    return CameraPose((lo + hi) / 2.0, distance, elevation)


def glide(previous: CameraPose | None, target: CameraPose, params: FramingParams) -> CameraPose:
    """One frame's step from ``previous`` towards ``target`` (the target itself on the first frame)."""
    if previous is None:
        return target
    a = params.glide
    return CameraPose(previous.lookat + a * (target.lookat - previous.lookat),
                      previous.distance + a * (target.distance - previous.distance),
                      previous.elevation + a * (target.elevation - previous.elevation))
