"""The capture point against the support polygon: when standing still is no longer possible.

The linear inverted pendulum of height h over its foot comes to rest over the
point xi = x + v sqrt(h/g) (the capture point; seed 000, Sec. 5.5.1 uses the
same test as "COM near the edge of the support or faster than epsilon").
While xi lies inside the polygon spanned by the soles on the ground, ankle
and hip torques can stop the body there; once it leaves the polygon, only a
step can. GBWC's standing mode and the standing skill's step trigger both use
this test.
"""

from __future__ import annotations

import numpy as np

from strider.control.support import Sole


def capture_offset(velocity: np.ndarray, height: float, gravity: float) -> np.ndarray:
    """v sqrt(h/g): how far beyond the COM the linear inverted pendulum comes to rest (same shape as ``velocity``)."""
    return velocity * np.sqrt(max(height, 1e-3) / gravity)


def sole_corners(ankle: np.ndarray, foot_rotation: np.ndarray, sole: Sole) -> np.ndarray:
    """The four corners of a sole on the ground plane (4 x 2, world x and y)."""
    local = np.array([[sole.front, sole.half_width, 0.0], [sole.front, -sole.half_width, 0.0],
                      [-sole.back, -sole.half_width, 0.0], [-sole.back, sole.half_width, 0.0]])
    return (np.asarray(ankle, dtype=float) + local @ np.asarray(foot_rotation, dtype=float).T)[:, :2]


def convex_hull(points: np.ndarray) -> np.ndarray:
    """Counter-clockwise convex hull of 2-D points (Andrew's monotone chain)."""
    pts = sorted(map(tuple, np.asarray(points, dtype=float)))

    def turn(o, a, b) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list = []
    upper: list = []
    for p in pts:
        while len(lower) >= 2 and turn(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and turn(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return np.array(lower[:-1] + upper[:-1])


def distance_outside(point: np.ndarray, polygon: np.ndarray) -> float:
    """Distance from ``point`` to a counter-clockwise convex polygon: > 0 outside, <= 0 (minus the depth) inside."""
    p = np.asarray(point, dtype=float)[:2]
    edges = np.roll(polygon, -1, axis=0) - polygon
    lengths = np.linalg.norm(edges, axis=1)
    outward = np.stack([edges[:, 1], -edges[:, 0]], axis=1) / lengths[:, None]
    signed = np.einsum("ij,ij->i", p - polygon, outward)
    if signed.max() <= 0.0:
        return float(signed.max())
    along = np.clip(np.einsum("ij,ij->i", p - polygon, edges) / lengths**2, 0.0, 1.0)
    nearest = polygon + along[:, None] * edges
    return float(np.min(np.linalg.norm(p - nearest, axis=1)))


def capture_margin(com: np.ndarray, com_velocity: np.ndarray, ground: float, gravity: float,
                   soles: list[np.ndarray]) -> float:
    """How far (m) the capture point lies outside the support polygon of ``soles`` (corner arrays); < 0 inside."""
    xi = np.asarray(com, dtype=float)[:2] + capture_offset(np.asarray(com_velocity, dtype=float)[:2],
                                                           float(com[2]) - ground, gravity)
    return distance_outside(xi, convex_hull(np.concatenate(soles)))

