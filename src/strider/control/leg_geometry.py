"""A leg as controllers see it: segment lengths, rest directions, knee axis and sole extent, read from the
character spec. Shared by the walking controllers (GBWC's foot placement and IK), and by planners that need a
leg's reach."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strider.characters.spec import CharacterSpec

SIDES = ("left", "right")
SIDE_SIGN = {"left": 1.0, "right": -1.0}   # +1 for the leg on the left (+y of the character frame)


@dataclass(frozen=True)
class LegGeometry:
    """Lengths and rest directions of one leg, read from the character spec."""

    upper: float
    lower: float
    upper_dir: np.ndarray     # hip -> knee in the thigh frame (unit)
    lower_dir: np.ndarray     # knee -> ankle in the shank frame (unit)
    knee_axis: np.ndarray     # knee hinge axis in the thigh frame
    ankle_height: float       # ankle centre above the sole with the foot flat
    ankle_sign: float         # +1 when the ankle's first hinge is +x, -1 for -x
    support: np.ndarray       # sole extent from the ankle: (half width, front, back), m

    @staticmethod
    def of(spec: CharacterSpec, side: str) -> LegGeometry:
        leg = spec.roles.legs[side]
        upper, lower, foot = spec.body(leg.upper), spec.body(leg.lower), spec.body(leg.foot)
        hip_to_knee = np.subtract(lower.joint.anchor_parent, upper.joint.anchor_child)
        knee_to_ankle = np.subtract(foot.joint.anchor_parent, lower.joint.anchor_child)
        sole = min(min(g.start[2], g.end[2]) - (g.radius if g.kind != "box" else 0.0) for g in foot.geoms)
        ankle = np.asarray(foot.joint.anchor_child)
        xs = [x for g in foot.geoms for x in (g.start[0], g.end[0])]
        ys = [abs(y) for g in foot.geoms for y in (g.start[1], g.end[1])]
        return LegGeometry(
            upper=float(np.linalg.norm(hip_to_knee)), lower=float(np.linalg.norm(knee_to_ankle)),
            upper_dir=hip_to_knee / np.linalg.norm(hip_to_knee),
            lower_dir=knee_to_ankle / np.linalg.norm(knee_to_ankle),
            knee_axis=np.asarray(lower.joint.axes[0], dtype=float),
            ankle_height=float(foot.joint.anchor_child[2] - sole),
            ankle_sign=float(np.sign(foot.joint.axes[0][0]) or 1.0),
            support=np.array([max(ys), max(xs) - ankle[0], ankle[0] - min(xs)]))
