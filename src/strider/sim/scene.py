"""What a world contains, as plain data: characters, terrain, obstacles and props.

A :class:`Scene` is assembled into MuJoCo by :mod:`strider.sim.build`; it is
cheap to describe, picklable, and the same description always gives the same
model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from strider.characters.spec import CharacterSpec
from strider.courses.course import Course
from strider.errors import UsageError

DEFAULT_TIMESTEP = 0.001
"""Physics step, s. The source used 0.5 ms (seed 000, Sec. 5.4); coros-walking.md, Sec. 4
decides on 1 ms for MuJoCo, with PD damping integrated implicitly so the stiff
ankle and toe servos stay stable at that step."""


TERRAIN_HALF_WIDTH = 3.0
"""Half-width (across y) of raised steps and bump fields, m: wider than any walk drifts sideways."""
STEP_RUNOUT = 60.0
"""Length of the last segment of a stepped profile, m: it runs on past any benchmark walk."""
BUMP_GRID = 0.025
"""Height-field spacing of a bump field, m: a quarter of the narrowest bump's radius."""
BUMP_RADIUS = (0.1, 0.3)
"""Range of bump radii (Gaussian sigma), m: a bump is about a foot long, so it tilts the foot rather than
hiding under it."""
BUMP_DENSITY = 4.0
"""Bumps per square metre of bump field."""
MAX_STEP_HEIGHT = 1.0
"""Tallest stepped-profile segment, m."""


@dataclass(frozen=True)
class Terrain:
    """The ground under the characters.

    ``flat``
        a level plane at z = 0.
    ``slope``
        a plane rising along +x by ``slope_deg`` (negative: downhill).
    ``steps``
        level ground whose height changes in steps along x: ``steps`` is a list of
        ``(x, height)``; from each ``x`` on, the ground is at ``height`` (m, >= 0) until
        the next entry, and at 0 before the first. A step up, a step down (start on a
        raised segment) and a staircase are all stepped profiles. Raised segments are
        static boxes; the last one runs ``STEP_RUNOUT`` m.
    ``bumps``
        level ground with random smooth bumps (Gaussian, heights up to ``bump_height``)
        from ``bump_start`` for ``bump_length`` m along +x, drawn from ``bump_seed``;
        a MuJoCo height field. The same seed always gives the same bumps.
    """

    kind: Literal["flat", "slope", "steps", "bumps"] = "flat"
    slope_deg: float = 0.0
    friction: float = 0.8
    steps: tuple[tuple[float, float], ...] = ()
    bump_height: float = 0.0
    bump_seed: int = 0
    bump_start: float = 1.0
    bump_length: float = 30.0

    def __post_init__(self) -> None:
        if self.kind == "steps":
            xs = [x for x, _ in self.steps]
            if not self.steps or xs != sorted(xs) or len(set(xs)) != len(xs):
                raise UsageError("a stepped terrain needs (x, height) entries with increasing x")
            if any(not (0.0 <= h <= MAX_STEP_HEIGHT) for _, h in self.steps):
                raise UsageError(f"stepped terrain heights must be between 0 and {MAX_STEP_HEIGHT} m")
        if self.kind == "bumps" and not (0.0 < self.bump_height <= 0.5 and self.bump_length > 0):
            raise UsageError("bumpy terrain needs 0 < bump_height <= 0.5 m and a positive bump_length")

    @staticmethod
    def parse(text: str) -> Terrain:
        """Parse a CLI terrain string: ``flat`` or ``slope:DEG``."""
        if text == "flat":
            return Terrain()
        kind, _, value = text.partition(":")
        if kind == "slope":
            try:
                deg = float(value)
            except ValueError:
                raise UsageError(f"--terrain {text!r}: slope needs degrees, e.g. slope:10") from None
            if not math.isfinite(deg) or abs(deg) > 45:
                raise UsageError(f"--terrain {text!r}: slope must be between -45 and 45 degrees")
            return Terrain("slope", deg)
        raise UsageError(f"--terrain {text!r}: expected 'flat' or 'slope:DEG'")

    def height(self, x: float) -> float:
        """Ground height at ``x`` along the centre line (bump fields: the level ground under the bumps)."""
        if self.kind == "slope":
            return math.tan(math.radians(self.slope_deg)) * x
        if self.kind == "steps":
            h = 0.0
            for start, height in self.steps:
                if x >= start:
                    h = height
            return h
        return 0.0

    def step_boxes(self) -> list[tuple[float, float, float]]:
        """Raised segments of a stepped profile as (x_start, x_end, height), heights > 0."""
        out = []
        for i, (start, height) in enumerate(self.steps):
            end = self.steps[i + 1][0] if i + 1 < len(self.steps) else start + STEP_RUNOUT
            if height > 0:
                out.append((start, end, height))
        return out

    def bump_grid(self) -> np.ndarray:
        """Heights (m) of a bump field on a ``BUMP_GRID`` grid: rows along y, columns along x.

        Each bump is a Gaussian with a random centre, radius and peak height; the field is
        their maximum (so no point exceeds ``bump_height``), and bumps keep clear of the
        field's edges so that it meets the level ground without a step.
        """
        rng = np.random.default_rng(self.bump_seed)
        ncol = round(self.bump_length / BUMP_GRID) + 1
        nrow = round(2 * TERRAIN_HALF_WIDTH / BUMP_GRID) + 1
        xs = np.linspace(0.0, self.bump_length, ncol)
        ys = np.linspace(-TERRAIN_HALF_WIDTH, TERRAIN_HALF_WIDTH, nrow)
        grid = np.zeros((nrow, ncol))
        count = round(BUMP_DENSITY * self.bump_length * 2 * TERRAIN_HALF_WIDTH)
        for _ in range(count):
            sigma = rng.uniform(*BUMP_RADIUS)
            reach = 3 * sigma
            cx = rng.uniform(reach, self.bump_length - reach)
            cy = rng.uniform(-TERRAIN_HALF_WIDTH + reach, TERRAIN_HALF_WIDTH - reach)
            peak = rng.uniform(0.0, self.bump_height)
            c0, c1 = np.searchsorted(xs, [cx - reach, cx + reach])
            r0, r1 = np.searchsorted(ys, [cy - reach, cy + reach])
            dx2 = (xs[c0:c1] - cx) ** 2
            dy2 = (ys[r0:r1] - cy) ** 2
            bump = peak * np.exp(-(dy2[:, None] + dx2[None, :]) / (2 * sigma ** 2))
            np.maximum(grid[r0:r1, c0:c1], bump, out=grid[r0:r1, c0:c1])
        return grid


@dataclass(frozen=True)
class Box:
    """A static box: an obstacle, a step or a stair tread. ``size`` is half-extents."""

    name: str
    pos: tuple[float, float, float]
    size: tuple[float, float, float]
    yaw: float = 0.0
    friction: float = 0.8


@dataclass(frozen=True)
class Prop:
    """A loose rigid body: a ball (``size`` = (radius,)) or a crate (half-extents)."""

    name: str
    shape: Literal["sphere", "box"]
    size: tuple[float, ...]
    mass: float
    pos: tuple[float, float, float]
    friction: float = 0.8
    velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class CharacterPlacement:
    """One character in the scene, standing at (x, y) facing ``heading`` (rad). A planar character walks in
    the x-z plane: it faces +x."""

    spec: CharacterSpec
    name: str = "hero"
    x: float = 0.0
    y: float = 0.0
    heading: float = 0.0

    def __post_init__(self) -> None:
        if self.spec.root == "planar" and self.heading != 0.0:
            raise UsageError(f"character {self.spec.name!r} is planar (it moves in the x-z plane, facing +x): "
                             f"it cannot face heading {self.heading}")


@dataclass(frozen=True)
class Scene:
    characters: tuple[CharacterPlacement, ...]
    terrain: Terrain = Terrain()
    obstacles: tuple[Box, ...] = ()
    props: tuple[Prop, ...] = ()
    timestep: float = DEFAULT_TIMESTEP
    gravity: float = 9.81
    course: Course | None = None   # a terrain course replaces ``terrain`` (strider.courses)

    def ground(self, x: float, y: float = 0.0) -> float:
        """The analytic terrain height under (x, y): the course's, or the terrain's along its centre line."""
        return self.course.height(x, y) if self.course is not None else self.terrain.height(x)

    def __post_init__(self) -> None:
        if self.course is not None and self.terrain != Terrain():
            raise UsageError("a scene takes a terrain or a course, not both")
        if not (1e-5 <= self.timestep <= 0.01):
            raise UsageError(f"physics timestep must be between 1e-5 and 0.01 s, got {self.timestep}")
        names = [c.name for c in self.characters]
        if len(set(names)) != len(names):
            raise UsageError("character names in a scene must be unique")
