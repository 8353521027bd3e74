"""What a foot can push against: ankle torques limited by the sole (seed 000, Sec. 5.3.3).

A torque at the ankle moves the centre of pressure under the sole; once the
centre of pressure would leave the sole the foot tips instead. With normal
force N and the sole reaching ``front``/``back`` of the ankle and
``half_width`` to each side, the torque the ground can react is bounded by
N times those distances (``margin`` keeps it off the very edge).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strider.characters.spec import CharacterSpec


@dataclass(frozen=True)
class Sole:
    """Sole extent from the ankle centre, m (foot frame, x forward), and the ankle's height above it."""

    half_width: float
    front: float
    back: float
    ankle_height: float = 0.0

    @staticmethod
    def of(spec: CharacterSpec, side: str) -> Sole:
        leg = spec.roles.legs[side]
        foot = spec.body(leg.foot)
        ankle = np.asarray(foot.joint.anchor_child)
        xs = [x for g in foot.geoms for x in (g.start[0], g.end[0])]
        ys = [abs(y) for g in foot.geoms for y in (g.start[1], g.end[1])]
        bottom = min(min(g.start[2], g.end[2]) - (g.radius if g.kind != "box" else 0.0) for g in foot.geoms)
        return Sole(half_width=max(ys), front=max(xs) - ankle[0], back=ankle[0] - min(xs),
                    ankle_height=float(ankle[2] - bottom))


def limit_ankle_torque(inversion: float, flexion: float, normal_force: float, sole: Sole,
                       margin: float = 0.7) -> tuple[float, float]:
    """Clip (inversion, flexion) ankle torques so the centre of pressure stays within ``margin`` of the sole.

    Positive flexion pitches the toes down (about +y), pressing on the front of the sole.
    """
    n = max(float(normal_force), 0.0) * margin
    return (float(np.clip(inversion, -n * sole.half_width, n * sole.half_width)),
            float(np.clip(flexion, -n * sole.back, n * sole.front)))
