"""Catmull-Rom trajectories over phase (seed 000, Sec. 2.4 and Sec. 5.3.1).

Gaits are authored as a few knots (phase, value) per degree of freedom; the
curve passes through every knot with C1 continuity. End tangents repeat the
end slopes (one-sided differences).
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass

from strider.datafile import Fields


@dataclass(frozen=True)
class CatmullRom:
    """A Catmull-Rom curve through knots ``(phases[i], values[i])``, clamped outside the knots."""

    phases: tuple[float, ...]
    values: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.phases) != len(self.values) or len(self.phases) == 0:
            raise ValueError("a trajectory needs as many values as phases, at least one")
        if any(b <= a for a, b in zip(self.phases, self.phases[1:])):
            raise ValueError("trajectory phases must increase strictly")

    def __call__(self, phase: float) -> float:
        p, v = self.phases, self.values
        n = len(p)
        if n == 1 or phase <= p[0]:
            return float(v[0])
        if phase >= p[-1]:
            return float(v[-1])
        i = bisect.bisect_right(p, phase) - 1   # np.searchsorted(side="right") without the array conversion
        h = p[i + 1] - p[i]
        s = (phase - p[i]) / h
        m0 = self._tangent(i) * h
        m1 = self._tangent(i + 1) * h
        s2, s3 = s * s, s * s * s
        return float((2 * s3 - 3 * s2 + 1) * v[i] + (s3 - 2 * s2 + s) * m0
                     + (-2 * s3 + 3 * s2) * v[i + 1] + (s3 - s2) * m1)

    def _tangent(self, i: int) -> float:
        p, v = self.phases, self.values
        lo, hi = max(i - 1, 0), min(i + 1, len(p) - 1)
        return (v[hi] - v[lo]) / (p[hi] - p[lo])

    @staticmethod
    def constant(value: float) -> CatmullRom:
        return CatmullRom((0.0,), (float(value),))


def read_trajectory(f: Fields, key: str, default: float | CatmullRom = ..., *, low: float, high: float,
                    values: str = "values") -> CatmullRom:
    """A trajectory field of a data file: a number (held over the whole phase) or a mapping of knots,
    ``{phases: [0, 0.5, 1], <values>: [a, b, c]}``, phases within [0, 1] and strictly increasing, every value within
    [``low``, ``high``]."""
    if not f.has(key) and isinstance(default, CatmullRom):
        return default
    raw = f.raw(key, default)
    if isinstance(raw, list):
        raise f.error(key, f"expected a number or knots {{phases: [...], {values}: [...]}}, got {raw!r}")
    if not isinstance(raw, dict):
        return CatmullRom.constant(f.number(key, default, min=low, max=high))
    knots = f.mapping(key)
    knots.reject_unknown({"phases", values})
    phases, points = knots.raw("phases"), knots.raw(values)
    if not isinstance(phases, list) or not isinstance(points, list) or not phases or len(phases) != len(points):
        raise f.error(key, f"expected phases and {values} lists of the same length, got {raw!r}")
    phases = knots.vector("phases", len(phases))
    points = knots.vector(values, len(points))
    if any(not 0.0 <= p <= 1.0 for p in phases) or any(b <= a for a, b in itertools.pairwise(phases)):
        raise f.error(key, f"phases must rise strictly within 0..1, got {list(phases)}")
    if any(not low <= v <= high for v in points):
        raise f.error(key, f"{values} must be within {low:g}..{high:g}, got {list(points)}")
    return CatmullRom(phases, points)
