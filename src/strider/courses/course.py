"""Terrain courses: one description that builds the MuJoCo geometry and answers a planner's questions.

A :class:`Course` is a run of pieces laid along +x from ``start`` (flat, slope, step, drop, stairs, gap,
stepping stones, a bar to step over, a crate, a height field), ``half_width`` either side of y = 0, over a
floor at the bottom of its deepest gap. It is plain data: ``strider.sim`` builds it (static boxes, a height
field, loose crates) and the same object answers

* :meth:`Course.height` — the top of the terrain at (x, y): what a ray cast straight down hits first
  (crates are loose bodies, not terrain, and are left out);
* :meth:`Course.sdf` — the signed distance (m, in the ground plane) to the nearest edge of support: positive
  where a foot can stand, negative over a gap, a bar or beyond the course;
* :attr:`Course.regions` — the support regions themselves.

A support region is a rectangle in (x, y) whose surface is continuous (a slope and the flats either side of
it are one region); a step, a riser or a gap ends one. Planar characters use the same course in the x-z plane.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

HEIGHT_INDEX_SLACK = 1e-6   # m: how far beyond its x-extent a piece stays a candidate for Course.height


@dataclass(frozen=True)
class Region:
    """Support: the rectangle [x0, x1] x [y0, y1] whose surface height is ``profile`` (a piecewise-linear height
    along x: (x, z) knots) or, for a height field, the field's own."""

    x0: float
    x1: float
    y0: float
    y1: float
    profile: tuple[tuple[float, float], ...]

    def contains(self, x: float, y: float) -> bool:
        return self.x0 <= x <= self.x1 and self.y0 <= y <= self.y1

    def surface(self, x: float) -> float:
        xs, zs = zip(*self.profile)
        return float(np.interp(x, xs, zs))

    def signed_distance(self, x: float, y: float) -> float:
        """Positive inside (distance to the nearest edge), negative outside (distance to the rectangle)."""
        dx = max(self.x0 - x, x - self.x1)
        dy = max(self.y0 - y, y - self.y1)
        if dx <= 0 and dy <= 0:
            return -max(dx, dy)
        return -math.hypot(max(dx, 0.0), max(dy, 0.0))


@dataclass(frozen=True)
class Block:
    """A static box of the course's geometry: ``centre`` and half ``size`` (m), pitched about y by ``pitch``
    (rad, positive: its +x end up); ``support`` says whether its top is a support region's surface."""

    name: str
    centre: tuple[float, float, float]
    size: tuple[float, float, float]
    pitch: float = 0.0
    support: bool = True


@dataclass(frozen=True)
class Crate:
    """A loose box on the course (half ``size``, m; ``mass``, kg), resting at ``centre``."""

    name: str
    centre: tuple[float, float, float]
    size: tuple[float, float, float]
    mass: float


@dataclass(frozen=True)
class HeightField:
    """A height field over [x0, x0 + length] x [-half_width, half_width]: ``grid`` heights (m, rows along y,
    columns along x) above ``base``."""

    x0: float
    length: float
    half_width: float
    base: float
    grid: np.ndarray = field(repr=False)

    def contains(self, x: float, y: float) -> bool:
        return self.x0 <= x <= self.x0 + self.length and -self.half_width <= y <= self.half_width

    def height(self, x: float, y: float) -> float:
        """The field's surface at (x, y), on the same two triangles per cell as the engine's collision mesh."""
        nrow, ncol = self.grid.shape
        u = (x - self.x0) / self.length * (ncol - 1)
        v = (y + self.half_width) / (2 * self.half_width) * (nrow - 1)
        c, r = min(int(u), ncol - 2), min(int(v), nrow - 2)
        fu, fv = u - c, v - r
        g = self.grid
        z00, z10, z01, z11 = g[r, c], g[r, c + 1], g[r + 1, c], g[r + 1, c + 1]
        # MuJoCo splits each cell along the diagonal from (c, r) to (c + 1, r + 1).
        if fu >= fv:
            z = z00 + fu * (z10 - z00) + fv * (z11 - z10)
        else:
            z = z00 + fv * (z01 - z00) + fu * (z11 - z01)
        return self.base + float(z)


@dataclass(frozen=True)
class Course:
    name: str
    description: str
    start: float
    end: float
    half_width: float
    floor: float
    friction: float
    regions: tuple[Region, ...]
    blocks: tuple[Block, ...]
    crates: tuple[Crate, ...] = ()
    heightfields: tuple[HeightField, ...] = ()
    obstacles: tuple[Region, ...] = ()   # footprints of bars: not support (their boxes are in ``blocks``)

    def height(self, x: float, y: float) -> float:
        """The terrain's top at (x, y): a support surface, a bar's top, a gap's bottom, or the floor."""
        # Controllers ask at every tick: only the pieces whose x-extent reaches x are tested (see _height_index).
        breaks, candidates = self._height_index
        top = self.floor
        for kind, piece in candidates[bisect.bisect_right(breaks, x)]:
            if kind == "region":
                if piece.contains(x, y):
                    top = max(top, piece.surface(x))
            elif kind == "field":
                if piece.contains(x, y):
                    top = max(top, piece.height(x, y))
            elif _inside(piece, x, y):   # bars and pit floors (level boxes)
                top = max(top, piece.centre[2] + piece.size[2])
        return top

    @cached_property
    def _height_index(self) -> tuple[list[float], list[list[tuple[str, object]]]]:
        """The pieces :meth:`height` reads, by stretch of x: the sorted ends of their x-extents, and for each
        stretch between two ends (and before the first, after the last) the pieces whose extent touches it,
        each widened by ``HEIGHT_INDEX_SLACK`` so that rounding at an edge never leaves one out. Every candidate
        is still tested exactly, so the answer is the one testing every piece would give."""
        pieces = ([("region", r, r.x0, r.x1) for r in self.regions]
                  + [("field", f, f.x0, f.x0 + f.length) for f in self.heightfields]
                  + [("block", b, b.centre[0] - b.size[0], b.centre[0] + b.size[0])
                     for b in self.blocks if not b.support])
        breaks = sorted({end for *_, lo, hi in pieces for end in (lo - HEIGHT_INDEX_SLACK, hi + HEIGHT_INDEX_SLACK)})
        bounds = [-math.inf] + breaks + [math.inf]
        candidates = [[(kind, piece) for kind, piece, lo, hi in pieces
                       if lo - HEIGHT_INDEX_SLACK <= b and a <= hi + HEIGHT_INDEX_SLACK]
                      for a, b in itertools.pairwise(bounds)]
        return breaks, candidates

    def sdf(self, x: float, y: float) -> float:
        """Signed distance (m) to the nearest edge of support in the ground plane: > 0 on support."""
        inside = max((r.signed_distance(x, y) for r in self.regions), default=-math.inf)
        for bar in self.obstacles:
            d = bar.signed_distance(x, y)
            if d > 0:
                return -d
            if inside > 0:
                inside = min(inside, -d)
        return inside

    def support_intervals(self, y: float = 0.0) -> list[tuple[float, float]]:
        """The stretches of x with support along the line at ``y`` (touching regions merged), in order: what a
        planar character's feet may land on."""
        spans = sorted((r.x0, r.x1) for r in self.regions if r.y0 <= y <= r.y1)
        merged: list[tuple[float, float]] = []
        for x0, x1 in spans:
            if merged and x0 <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], x1))
            else:
                merged.append((x0, x1))
        return merged

    def support_at(self, x: float, y: float) -> bool:
        return self.sdf(x, y) > 0.0

    def heights(self, xy: np.ndarray) -> np.ndarray:
        """:meth:`height` at many points: ``xy`` (..., 2) gives (...)."""
        return self._each(self.height, xy)

    def sdfs(self, xy: np.ndarray) -> np.ndarray:
        """:meth:`sdf` at many points: ``xy`` (..., 2) gives (...)."""
        return self._each(self.sdf, xy)

    @staticmethod
    def _each(fn, xy: np.ndarray) -> np.ndarray:
        xy = np.asarray(xy, dtype=float)
        flat = xy.reshape(-1, 2)
        return np.array([fn(float(x), float(y)) for x, y in flat]).reshape(xy.shape[:-1])


def _inside(block: Block, x: float, y: float) -> bool:
    return abs(x - block.centre[0]) <= block.size[0] and abs(y - block.centre[1]) <= block.size[1]
