"""How far a character got along the way it walked: the speeds a run's summary reports.

Speed measured along the starting heading says nothing once the character turns (a walk that turns at
0.5 rad/s comes back past its start), so progress is summed tick by tick along the character's facing at
that tick: the speed along the walked path; the sideways part, summed the same way, is the drift off that path
(a commanded turn is no drift). The steady speed is the same over the run's last half, the
window the walking envelope measures (specs/coros-walking.md, P2), so the start from rest is left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

STEADY_FRACTION = 0.5   # the steady speed is measured over this last fraction of the run (coros-walking.md, P2)


@dataclass
class PathProgress:
    """Metres walked along the facing, over the whole run and over its last half; a plain value, so an
    episode snapshot carries it."""

    last: tuple[float, float]        # COM (x, y) at the last update
    steady_start: float              # s into the run where the steady window opens
    along: float = 0.0               # m along the facing since the start
    steady_along: float = 0.0        # m along the facing since the steady window opened
    steady_from: float | None = None  # s when it opened (the first update at or after steady_start)
    sideways: float = 0.0            # m to the left of the facing since the start: drift off the walked path

    @staticmethod
    def begin(com: np.ndarray, seconds: float) -> PathProgress:
        return PathProgress(last=(float(com[0]), float(com[1])), steady_start=(1.0 - STEADY_FRACTION) * seconds)

    def update(self, com: np.ndarray, facing: float, t: float) -> None:
        """Once per control tick (on plain floats: this runs in the episode loop)."""
        x, y = float(com[0]), float(com[1])
        dx, dy = x - self.last[0], y - self.last[1]
        c, s = math.cos(facing), math.sin(facing)
        step = dx * c + dy * s
        self.last = (x, y)
        self.along += step
        self.sideways += dy * c - dx * s
        if self.steady_from is not None:
            self.steady_along += step
        elif t >= self.steady_start:
            self.steady_from = t

    def mean_speed(self, t: float) -> float:
        return self.along / t if t > 0 else 0.0

    def steady_speed(self, t: float) -> float | None:
        """Speed over the steady window up to time ``t``; None if the run never reached it."""
        if self.steady_from is None or t <= self.steady_from:
            return None
        return self.steady_along / (t - self.steady_from)
