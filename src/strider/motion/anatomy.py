"""Guessing a source skeleton's axes and unit from its anatomy: where its hips, feet and sides are.

A skeleton that a built-in joint map recognizes gives its legs by name; up is
from the ankles to the hips, left from the right hip to the left one, forward
is left x up. Anything else is taken as BVH's usual Y up, facing +Z.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strider.motion.axes import Axes, axis_name, axis_vector, guess_unit
from strider.motion.skeleton import Skeleton

FALLBACK_AXES = ("+y", "+z")
"""Up and forward when the legs cannot be found: the BVH convention (Biovision; the CMU release)."""


@dataclass(frozen=True)
class Legs:
    """Joint indices of both legs: hip (upper leg), knee (lower leg) and ankle (foot), left then right."""

    hips: tuple[int, int]
    knees: tuple[int, int]
    ankles: tuple[int, int]
    map_name: str

    def length(self, skeleton: Skeleton) -> float:
        """Mean rest hip-to-knee plus knee-to-ankle length, in the skeleton's units."""
        p = skeleton.rest_positions()
        return float(np.mean([np.linalg.norm(p[k] - p[h]) + np.linalg.norm(p[a] - p[k])
                              for h, k, a in zip(self.hips, self.knees, self.ankles)]))


@dataclass(frozen=True)
class AxesGuess:
    axes: Axes
    confident: bool
    unit_name: str
    leg_length: float | None


def find_legs(skeleton: Skeleton) -> Legs | None:
    """The legs, found through the built-in joint maps (roles of the default character)."""
    from strider.characters import load_character
    from strider.motion.joint_map import BUILT_IN_MAPS, character_roles

    spec = load_character("bipv3")
    roles = character_roles(spec)
    for m in BUILT_IN_MAPS.values():
        if not m.covers_legs(skeleton, spec):
            continue
        resolved = m.resolve(skeleton, spec)
        pairs = {kind: (resolved[roles[f"left_{kind}"]][0], resolved[roles[f"right_{kind}"]][0])
                 for kind in ("upper_leg", "lower_leg", "foot")}
        return Legs(pairs["upper_leg"], pairs["lower_leg"], pairs["foot"], m.name)
    return None


def guess_axes(skeleton: Skeleton) -> AxesGuess:
    legs = find_legs(skeleton)
    if legs is None:
        height = float(np.ptp(skeleton.rest_positions()[:, 1]))
        unit, unit_name = guess_unit(height / 2.0)
        return AxesGuess(Axes(*FALLBACK_AXES, unit=unit), False, unit_name, None)
    p = skeleton.rest_positions()
    up = p[list(legs.hips)].mean(axis=0) - p[list(legs.ankles)].mean(axis=0)
    left = p[legs.hips[0]] - p[legs.hips[1]]
    up_name = axis_name(up)
    left = left - (left @ axis_vector(up_name)) * axis_vector(up_name)
    forward = np.cross(left, axis_vector(up_name))
    forward_name = axis_name(forward)
    length = legs.length(skeleton)
    unit, unit_name = guess_unit(length)
    if forward_name[1] == up_name[1]:
        return AxesGuess(Axes(*FALLBACK_AXES, unit=unit), False, unit_name, length)
    return AxesGuess(Axes(up_name, forward_name, unit), True, unit_name, length)
