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
from strider.courses.library import HEIGHTFIELD_CELL, bump_grid
from strider.errors import UsageError

DEFAULT_TIMESTEP = 0.001
"""Physics step, s. The source used 0.5 ms (seed 000, Sec. 5.4); coros-walking.md, Sec. 4
decides on 1 ms for MuJoCo, with PD damping integrated implicitly so the stiff
ankle and toe servos stay stable at that step."""


TERRAIN_HALF_WIDTH = 3.0
"""Half-width (across y) of raised steps and bump fields, m: wider than any walk drifts sideways."""
STEP_RUNOUT = 60.0
"""Length of the last segment of a stepped profile, m: it runs on past any benchmark walk."""
BUMP_GRID = HEIGHTFIELD_CELL
"""Height-field spacing of a bump field, m (the courses' height-field cell)."""
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
        """Heights (m) of the bump field on a ``BUMP_GRID`` grid, rows along y, columns along x: the courses'
        random smooth bumps (:func:`strider.courses.library.bump_grid`), so the same seed gives the same field."""
        return bump_grid(self.bump_length, TERRAIN_HALF_WIDTH, self.bump_height, self.bump_seed)


@dataclass(frozen=True)
class Box:
    """A static box: an obstacle, a step or a stair tread. ``size`` is half-extents."""

    name: str
    pos: tuple[float, float, float]
    size: tuple[float, float, float]
    yaw: float = 0.0
    friction: float = 0.8
    # False: furniture (a table): it collides, but it is not ground - the height under a point, which foot
    # placement and the fall test's root height ask for, looks through it to the terrain below.
    terrain: bool = True


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
    # MuJoCo takes the larger friction of two touching geoms; a prop whose friction must hold against the ground
    # (an 80 kg crate with mu 0.2, seed 000, Sec. 5.5.4) overrides it (coros-walking.md, Sec. 4: "crate mu via
    # priority").
    own_friction: bool = False


@dataclass(frozen=True)
class Grip:
    """A hand hold: a spring-damper pulling ``point`` (in the frame of the character's ``body``) onto ``handle``
    (in the prop's frame). It is off until a controller closes it (:meth:`strider.sim.World.set_grip`).

    Seed 000, Sec. 5.5.4 connects the hands to the handles "with springs and dampers"; here that is a soft
    MuJoCo point constraint (coros-walking.md, Sec. 4: soft welds for hand-crate links) whose stiffness is a
    mass-independent time constant and damping ratio, as contacts have. It holds the point, not the orientation:
    the hands are not animated (Sec. 5.5.4), so the crate may pitch about the line through both handles.
    """

    name: str
    body: str
    point: tuple[float, float, float]
    prop: str
    handle: tuple[float, float, float]
    character: str = "hero"
    time_constant: float = 0.02    # s
    damping_ratio: float = 1.0


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
    grips: tuple[Grip, ...] = ()
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
        props = {p.name for p in self.props}
        for grip in self.grips:
            placement = next((c for c in self.characters if c.name == grip.character), None)
            if placement is None:
                raise UsageError(f"grip {grip.name!r}: no character named {grip.character!r} in the scene")
            if grip.body not in {b.name for b in placement.spec.bodies}:
                raise UsageError(f"grip {grip.name!r}: character {placement.spec.name!r} has no body {grip.body!r}")
            if grip.prop not in props:
                raise UsageError(f"grip {grip.name!r}: no prop named {grip.prop!r} in the scene")
            if not (grip.time_constant > 0 and grip.damping_ratio > 0):
                raise UsageError(f"grip {grip.name!r}: time constant and damping ratio must be > 0")
