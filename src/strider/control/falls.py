"""Fall detection: one shared definition for every controller and benchmark.

A character has fallen when a body other than its feet and toes touches the
ground or an obstacle, or its torso tilts more than ``max_tilt`` from
vertical, or its root sinks below ``min_height_fraction`` of its standing
height (coros-walking.md, Sec. 5: "a non-foot geom touching ground, or pelvis
below 0.5x standing height").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from strider.control.fastmath import clamp

if TYPE_CHECKING:   # only for annotations: the fall criteria are read without loading the engine
    from strider.sim import Character, World


@dataclass(frozen=True)
class FallCriteria:
    max_tilt: float = 1.0              # rad, torso-to-vertical (torres-skills.md uses a 1.0 rad cone)
    min_height_fraction: float = 0.5   # of standing root height (coros-walking.md, Sec. 5)


def tilt(up_axis: Sequence[float]) -> float:
    """Angle between a body's up axis (world) and vertical."""
    # np.arccos, not math.acos: the two round differently, and fall times must not move.
    return float(np.arccos(clamp(up_axis[2], -1.0, 1.0)))


def has_fallen(non_foot_contact: bool, torso_up: Sequence[float], root_height: float, standing_height: float,
               criteria: FallCriteria = FallCriteria()) -> bool:
    return (non_foot_contact or tilt(torso_up) > criteria.max_tilt
            or root_height < criteria.min_height_fraction * standing_height)


class FallJudge:
    """The one fall test, bound to a character in a world: what every controller, benchmark and rollout asks.

    The standing height is measured when the judge is made, from the character's root to the terrain under it,
    so make it while the character stands in its initial pose.
    """

    def __init__(self, world: World, character: Character, criteria: FallCriteria = FallCriteria()):
        self.world, self.character, self.criteria = world, character, criteria
        self.root, self.torso = character.spec.roles.root, character.spec.roles.torso
        self.standing_height = self._root_height()

    def _root_height(self) -> float:
        x, y, z = self.character.body_position_floats(self.root)
        return z - self.world.ground_height(x, y)

    def __call__(self) -> bool:
        """True when the character has fallen now."""
        # On plain floats: every controller asks this at every control tick.
        ch = self.character
        return has_fallen(ch.non_foot_contact(), ch.body_up_floats(self.torso), self._root_height(),
                          self.standing_height, self.criteria)
