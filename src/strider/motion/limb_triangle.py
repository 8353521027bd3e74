"""The triangle a two-link limb makes: where the middle joint sits and how far the limb bends.

A thigh and shank (or upper arm and forearm) of lengths ``upper`` and
``lower`` spanning a ``distance`` from root to end form a triangle; the law of
cosines gives the middle joint's place along the root-end line and off it, and
the bend between the links. This is the core of analytic two-link IK, shared
by the controllers' per-step IK (:mod:`strider.control.ik`, on single numbers)
and the motion layer's stance-foot correction (:mod:`strider.motion.foot_planting`,
on whole clips), so it takes single numbers and arrays alike.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

REACH_MARGIN = 1e-6
"""m: distances are kept this far inside what the links can span, so the triangle never degenerates to a line."""

Length = float | np.ndarray
"""One number (a controller's limb this step) or an array (a clip's frames), in m or rad."""


class LimbTriangle(NamedTuple):
    along: Length    # root to the middle joint's projection on the root-end line
    offset: Length   # the middle joint's distance from that line
    bend: Length     # angle between the two links' directions, rad: 0 straight, pi folded back


def limb_triangle(upper: Length, lower: Length, distance: Length) -> LimbTriangle:
    """The triangle of links ``upper`` and ``lower`` spanning ``distance`` (numbers or arrays, broadcast).

    A distance out of reach is clamped to the nearest reachable one, so a limb
    straightens (or folds) towards its target instead of failing.
    """
    reach = _clip(distance, abs(upper - lower) + REACH_MARGIN, upper + lower - REACH_MARGIN)
    along = (upper**2 - lower**2 + reach**2) / (2 * reach)
    offset = _sqrt(_clip(upper**2 - along**2, 0.0, np.inf))
    cos_inner = (upper**2 + lower**2 - reach**2) / (2 * upper * lower)
    bend = np.pi - np.arccos(_clip(cos_inner, -1.0, 1.0))
    return LimbTriangle(along, offset, bend)


# A controller solves one limb per control step, where a NumPy call on a single number costs several times the
# arithmetic; math and the built-ins give the same IEEE results there (sqrt is correctly rounded either way).
def _clip(x: Length, lo: Length, hi: Length) -> Length:
    return min(max(x, lo), hi) if isinstance(x, float) else np.minimum(np.maximum(x, lo), hi)


def _sqrt(x: Length) -> Length:
    return math.sqrt(x) if isinstance(x, float) else np.sqrt(x)
