"""The swing foot's path from lift-off to the planned foothold (slip-planning.md Sec. 4, E_swing).

Horizontally a minimum-jerk curve reaches the foothold at the planned touchdown; every replan re-aims it from
the point the path has reached, so a moved target or touchdown time never makes the reference jump.
Vertically the foot follows the straight line between lift-off and foothold heights, raised by
``arc * sin(pi s)`` over the fraction s of the swing done: ``arc`` is the spec's clearance, or more where the
ground between lift-off and the foothold rises above that line (a step up, the edge of a step down), so that
the sole's whole length passes over it (the spec's "over terrain").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from strider.control.min_jerk import min_jerk


@dataclass(frozen=True)
class SwingParams:
    clearance: float = 0.10     # m above the line from lift-off to foothold (slip-planning.md Sec. 4)
    # The spec's "over terrain", read as decisions: where the ground under the sole along the straight line to
    # the foothold rises more than terrain_margin above the lift-off-to-foothold line, the arc grows until the
    # sole clears it by that margin, up to max_clearance; checked at terrain_samples points of the swing.
    terrain_margin: float = 0.03     # m
    max_clearance: float = 0.4       # m
    terrain_samples: int = 24


@dataclass
class SwingReference:
    position: np.ndarray        # (3,)
    velocity: np.ndarray
    acceleration: np.ndarray


class SwingPath:
    """One swing, from ``lift_time`` at ``lift_point`` to a foothold that replans may move."""

    def __init__(self, lift_time: float, lift_point, params: SwingParams = SwingParams(),
                 ground: Callable[[np.ndarray], np.ndarray] | None = None, sole_reach: float = 0.0):
        """``ground``: heights (...) of points (..., 2), to pass over (None: no terrain is looked at);
        ``sole_reach``: how far the sole reaches ahead of and behind its centre, m."""
        self.params = params
        self.ground, self.sole_reach = ground, sole_reach
        self.arc = params.clearance
        self.lift_time = float(lift_time)
        self.lift_point = np.asarray(lift_point, dtype=float).copy()
        self._aim_time = self.lift_time
        self._aim_xy = (self.lift_point[:2].copy(), np.zeros(2), np.zeros(2))
        self.target = self.lift_point.copy()
        self.touchdown_time = self.lift_time

    def aim(self, t: float, target, touchdown_time: float) -> None:
        """A new foothold and touchdown time from a replan at ``t``; the curve restarts where it is now."""
        now = self.at(t)
        self._aim_time = float(t)
        self._aim_xy = (now.position[:2], now.velocity[:2], now.acceleration[:2])
        self.target = np.asarray(target, dtype=float).copy()
        self.touchdown_time = max(float(touchdown_time), float(t))
        self.arc = self._arc()

    def _arc(self) -> float:
        p = self.params
        if self.ground is None:
            return p.clearance
        s = np.linspace(0.0, 1.0, p.terrain_samples + 2)[1:-1]
        start, end = self.lift_point, self.target
        direction = end[:2] - start[:2]
        length = float(np.linalg.norm(direction))
        unit = direction / length if length > 0.0 else np.zeros(2)
        centres = start[:2] + s[:, None] * direction
        heights = np.max([self.ground(centres + reach * unit) for reach in (-self.sole_reach, 0.0, self.sole_reach)],
                         axis=0)
        above = heights - (start[2] + (end[2] - start[2]) * s)
        rising = above > p.terrain_margin
        if not rising.any():
            return p.clearance
        needed = float(np.max((above[rising] + p.terrain_margin) / np.sin(np.pi * s[rising])))
        return max(p.clearance, min(needed, p.max_clearance))

    def at(self, t: float) -> SwingReference:
        remaining = self.touchdown_time - self._aim_time
        p0, v0, a0 = self._aim_xy
        xy, vxy, axy = min_jerk(p0, v0, a0, self.target[:2], remaining, t - self._aim_time)
        span = self.touchdown_time - self.lift_time
        if span <= 0.0:
            return SwingReference(np.append(xy, self.target[2]), np.append(vxy, 0.0), np.append(axy, 0.0))
        s = min(max((t - self.lift_time) / span, 0.0), 1.0)
        rise = self.target[2] - self.lift_point[2]
        h = self.arc
        z = self.lift_point[2] + rise * s + h * math.sin(math.pi * s)
        vz = (rise + h * math.pi * math.cos(math.pi * s)) / span if s < 1.0 else 0.0
        az = -h * math.pi**2 * math.sin(math.pi * s) / span**2 if s < 1.0 else 0.0
        return SwingReference(np.append(xy, z), np.append(vxy, vz), np.append(axy, az))
