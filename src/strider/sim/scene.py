"""What a world contains, as plain data: characters, terrain, obstacles and props.

A :class:`Scene` is assembled into MuJoCo by :mod:`strider.sim.build`; it is
cheap to describe, picklable, and the same description always gives the same
model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from strider.characters.spec import CharacterSpec
from strider.errors import UsageError

DEFAULT_TIMESTEP = 0.001
"""Physics step, s. The source used 0.5 ms (seed 000, Sec. 5.4); coros-walking.md, Sec. 4
decides on 1 ms for MuJoCo, with PD damping integrated implicitly so the stiff
ankle and toe servos stay stable at that step."""


@dataclass(frozen=True)
class Terrain:
    """Ground: flat, or a plane sloping up along +x by ``slope_deg`` (negative: downhill)."""

    kind: Literal["flat", "slope"] = "flat"
    slope_deg: float = 0.0
    friction: float = 0.8

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
        return math.tan(math.radians(self.slope_deg)) * x if self.kind == "slope" else 0.0


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
    """One character in the scene, standing at (x, y) facing ``heading`` (rad)."""

    spec: CharacterSpec
    name: str = "hero"
    x: float = 0.0
    y: float = 0.0
    heading: float = 0.0


@dataclass(frozen=True)
class Scene:
    characters: tuple[CharacterPlacement, ...]
    terrain: Terrain = Terrain()
    obstacles: tuple[Box, ...] = ()
    props: tuple[Prop, ...] = ()
    timestep: float = DEFAULT_TIMESTEP
    gravity: float = 9.81

    def __post_init__(self) -> None:
        if not (1e-5 <= self.timestep <= 0.01):
            raise UsageError(f"physics timestep must be between 1e-5 and 0.01 s, got {self.timestep}")
        names = [c.name for c in self.characters]
        if len(set(names)) != len(names):
            raise UsageError("character names in a scene must be unique")
